# Reference values of the proportional-odds model (MASS::polr) and of the standard errors of a
# multinomial logit (nnet::multinom, Hess = TRUE) on a simulated data set written beside them.
# Run from this folder: Rscript make_fixtures.R
library(MASS)
library(nnet)
set.seed(20260521)
n <- 400
sex <- factor(sample(c("F", "M"), n, replace = TRUE))
age <- round(runif(n, 18, 70))
eta <- 0.8 * (sex == "M") + 0.04 * age
cuts <- c(1, 2.2, 3.5)
u <- rlogis(n)
level <- findInterval(eta + u, cuts)
educ <- factor(c("low", "mid", "high", "top")[level + 1], levels = c("low", "mid", "high", "top"), ordered = TRUE)
region <- factor(sample(c("north", "south", "west"), n, replace = TRUE, prob = c(0.5, 0.3, 0.2)))
d <- data.frame(sex = sex, age = age, educ = educ, region = region)
write.csv(d, "ordinal_data.csv", row.names = FALSE)

fit <- polr(educ ~ sex + age, data = d, Hess = TRUE)
v <- vcov(fit)
out <- data.frame(term = c(names(coef(fit)), names(fit$zeta)), estimate = c(coef(fit), fit$zeta), se = sqrt(diag(v)))
write.csv(out, "polr_coef.csv", row.names = FALSE)
write.csv(data.frame(loglik = as.numeric(logLik(fit))), "polr_loglik.csv", row.names = FALSE)

mfit <- multinom(region ~ sex + age, data = d, Hess = TRUE, trace = FALSE, reltol = 1e-14, maxit = 1000)
s <- summary(mfit)
mout <- data.frame(level = rep(rownames(coef(mfit)), each = ncol(coef(mfit))),
                   term = rep(colnames(coef(mfit)), nrow(coef(mfit))),
                   estimate = as.vector(t(coef(mfit))), se = as.vector(t(s$standard.errors)))
write.csv(mout, "multinom_se.csv", row.names = FALSE)
