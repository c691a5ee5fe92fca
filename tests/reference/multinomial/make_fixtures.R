# Multinomial logit of race on sex, age and hours (first 2000 Adult records), fitted by
# nnet::multinom to full convergence; the coefficients check cellsafe.synthesis.fit_multinomial.
# Run from this folder: Rscript make_fixtures.R
library(nnet)
d <- read.csv("adult_2000.csv")
d$race <- factor(d$race)
d$sex <- factor(d$sex)
fit <- multinom(race ~ sex + age + hours, data = d, maxit = 10000, reltol = 1e-14, abstol = 1e-14, trace = FALSE)
co <- coef(fit)
out <- data.frame(category = rownames(co), co, check.names = FALSE)
write.csv(out, "multinom_coef.csv", row.names = FALSE)
cat(sprintf("logLik %.8f\n", as.numeric(logLik(fit))))
writeLines(sprintf("logLik,%.10f", as.numeric(logLik(fit))), "multinom_loglik.csv")
