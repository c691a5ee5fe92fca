# Reference coefficients and standard errors for cellsafe.metrics.microdata (fit_ols, fit_logistic,
# regression_utility).  Run: Rscript make_glm_reference.R  (writes glm_data.csv, glm_reference.csv)
set.seed(20261122)
n <- 300
x1 <- rnorm(n)
g <- factor(sample(c("a", "b", "c"), n, replace = TRUE))
y <- 1 + 0.5 * x1 + c(a = 0, b = 0.8, c = -0.4)[as.character(g)] + rnorm(n)
eta <- -0.3 + 0.9 * x1 + c(a = 0, b = 0.6, c = -0.7)[as.character(g)]
z <- rbinom(n, 1, plogis(eta))
d <- data.frame(x1 = x1, g = g, y = y, z = z)
write.csv(d, "glm_data.csv", row.names = FALSE)
fo <- summary(lm(y ~ x1 * g, data = d))$coefficients
fl <- summary(glm(z ~ x1 + g, family = binomial, data = d))$coefficients
out <- rbind(
  data.frame(model = "ols", term = rownames(fo), estimate = fo[, 1], se = fo[, 2]),
  data.frame(model = "logistic", term = rownames(fl), estimate = fl[, 1], se = fl[, 2])
)
write.csv(format(out, digits = 15), "glm_reference.csv", row.names = FALSE, quote = FALSE)
