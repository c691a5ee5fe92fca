# Reference values for tests/distributions/test_integer_noise.py and tests/dp: the discrete
# Gaussian and the discrete Laplace (two-sided geometric) by direct summation over the integers,
# independently of cellsafe (base R only).  Run from this folder:  Rscript make_integer_noise.R
#
# 1. discrete_gaussian.csv: for each sigma, log of the normalizing constant
#    Z = sum_x exp(-x^2 / (2 sigma^2)), the variance sum_x x^2 exp(-x^2 / (2 sigma^2)) / Z, and
#    P(X > x) = sum_{y > x} P(y) at a few x (sums over |x| <= 40 sigma + 40, beyond which the
#    terms are below exp(-800)).
# 2. discrete_laplace.csv: the same for P(x) proportional to exp(-|x| / scale), summed over
#    |x| <= 800 scale + 40.
# 3. discrete_gaussian_delta.csv: the exact delta of discrete Gaussian noise on a query of integer
#    sensitivity D, delta = sum_y max(0, P(y) - exp(eps) P(y - D)).

options(digits = 17)

tails <- function(x, w, at) sapply(at, function(a) sum(w[x > a]) / sum(w))

dg <- NULL
for (sigma in c(0.3, 1, 2.5, 10, 150, 1000)) {
  lim <- ceiling(40 * sigma + 40)
  x <- -lim:lim
  w <- exp(-x^2 / (2 * sigma^2))
  at <- c(-3, 0, 3, floor(2 * sigma), floor(5 * sigma))
  dg <- rbind(dg, data.frame(sigma = sigma, log_z = log(sum(w)), var = sum(x^2 * w) / sum(w),
                             x = at, sf = tails(x, w, at)))
}
write.csv(dg, "discrete_gaussian.csv", row.names = FALSE)

dl <- NULL
for (scale in c(0.4, 1, 3.7, 50)) {
  lim <- ceiling(800 * scale + 40)
  x <- -lim:lim
  w <- exp(-abs(x) / scale)
  at <- c(-3, 0, 3, floor(2 * scale), floor(5 * scale))
  dl <- rbind(dl, data.frame(scale = scale, log_z = log(sum(w)), var = sum(x^2 * w) / sum(w),
                             x = at, sf = tails(x, w, at)))
}
write.csv(dl, "discrete_laplace.csv", row.names = FALSE)

delta <- NULL
for (row in list(c(0.8, 0.5, 1), c(2, 1, 1), c(3.3, 0.7, 2), c(10, 0.2, 1), c(40, 0.05, 3))) {
  sigma <- row[1]; eps <- row[2]; D <- row[3]
  lim <- ceiling(40 * sigma + 40 + D)
  y <- -lim:lim
  lw <- -y^2 / (2 * sigma^2)
  lz <- log(sum(exp(lw)))
  p <- exp(lw - lz)
  p_shift <- exp(-(y - D)^2 / (2 * sigma^2) - lz)
  delta <- rbind(delta, data.frame(sigma = sigma, eps = eps, sens = D, delta = sum(pmax(p - exp(eps) * p_shift, 0))))
}
write.csv(delta, "discrete_gaussian_delta.csv", row.names = FALSE)
