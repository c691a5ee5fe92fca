# Reference values for tests/dp: exact likelihoods of the fixed-total DP synthesizers of 004,
# computed independently of cellsafe (base R only).  Run from this folder:  Rscript make_fixtures.R
#
# 1. dirichlet_multinomial.csv: log P(z | y) of the Dirichlet-multinomial DM(z.; y + alpha)
#    (004 eq. 2) for every output z of a 3-cell table.
# 2. conditioned_nb.csv: log P(z | y) of independent posterior predictive negative binomials
#    (004 eq. 8) conditioned on their sum (eq. 9 extended to 3 cells), for every output z.
# 3. exact_loss.csv: the exact privacy loss, by enumeration of all neighbouring inputs and all
#    outputs, of the Poisson-gamma synthesizer for several two- and three-cell settings.

compositions <- function(total, parts) {
  if (parts == 1) return(matrix(total, 1, 1))
  out <- NULL
  for (first in 0:total) {
    rest <- compositions(total - first, parts - 1)
    out <- rbind(out, cbind(first, rest))
  }
  unname(out)
}

log_dm <- function(z, w) {
  tot <- sum(z)
  lgamma(tot + 1) - sum(lgamma(z + 1)) + lgamma(sum(w)) - sum(lgamma(w)) +
    sum(lgamma(z + w)) - lgamma(tot + sum(w))
}

# negative binomial of 004 eq. 8: size y + a, P(z) ~ Gamma(z + size) / z! * q^z, q = n / (b + 2 n)
log_cnb_all <- function(Z, y, a, b, n) {
  size <- y + a
  prob <- (b + n) / (b + 2 * n)        # R's success probability
  lp <- apply(Z, 1, function(z) sum(dnbinom(z, size = size, prob = prob, log = TRUE)))
  lp - log(sum(exp(lp)))               # Z holds every output with this total: exact normalizer
}

# 1 ---------------------------------------------------------------------------------------
y <- c(2, 0, 3); alpha <- c(0.7, 1.5, 2.2)
Z <- compositions(sum(y), 3)
dm <- data.frame(z1 = Z[, 1], z2 = Z[, 2], z3 = Z[, 3],
                 logp = apply(Z, 1, log_dm, w = y + alpha))
write.csv(dm, "dirichlet_multinomial.csv", row.names = FALSE)

# 2 ---------------------------------------------------------------------------------------
y <- c(1, 3, 0); a <- c(0.8, 2.0, 1.3); b <- c(50, 4000, 900); n <- c(100, 20000, 1500)
Z <- compositions(sum(y), 3)
cnb <- data.frame(z1 = Z[, 1], z2 = Z[, 2], z3 = Z[, 3], logp = log_cnb_all(Z, y, a, b, n))
write.csv(cnb, "conditioned_nb.csv", row.names = FALSE)

# 3 ---------------------------------------------------------------------------------------
exact_loss <- function(total, a, b, n) {
  I <- length(a)
  Y <- compositions(total, I)
  L <- t(apply(Y, 1, function(y) log_cnb_all(Y, y, a, b, n)))
  key <- apply(Y, 1, paste, collapse = ",")
  worst <- 0
  for (r in seq_len(nrow(Y))) for (i in 1:I) for (j in 1:I) {
    if (i == j || Y[r, i] == 0) next
    x <- Y[r, ]; x[i] <- x[i] - 1; x[j] <- x[j] + 1
    s <- match(paste(x, collapse = ","), key)
    worst <- max(worst, abs(L[r, ] - L[s, ]))
  }
  worst
}

cases <- list(
  list(total = 3, a = c(5.4081079604, 1.7459301161), n = c(1000, 20000)),   # 004 eq. 15, eps = 1
  list(total = 3, a = c(2, 2), n = c(1000, 20000)),
  list(total = 4, a = c(1.5, 3), n = c(1, 10)),
  list(total = 5, a = c(3, 3), n = c(7, 7)),
  list(total = 4, a = c(1, 2, 4), n = c(10, 300, 50))
)
rows <- NULL
for (k in seq_along(cases)) {
  cs <- cases[[k]]
  rate <- cs$total / sum(cs$n)                 # smoothing to the national rate: b = a / rate
  b <- cs$a / rate
  rows <- rbind(rows, data.frame(case = k, total = cs$total,
                                 a = paste(cs$a, collapse = ";"), n = paste(cs$n, collapse = ";"),
                                 b = paste(format(b, digits = 17), collapse = ";"),
                                 loss = exact_loss(cs$total, cs$a, b, cs$n)))
}
write.csv(rows, "exact_loss.csv", row.names = FALSE)

# 4. analytic_gaussian.csv: the smallest sigma with
#    Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D) <= delta (Balle and Wang 2018, Theorem 8)
ag <- expand.grid(eps = c(0.1, 0.5, 1, 4), delta = c(1e-5, 1e-9), sens = c(1, 2))
ag$sigma <- mapply(function(eps, delta, sens) {
  f <- function(ls) { s <- exp(ls)
    pnorm(sens / (2 * s) - eps * s / sens) - exp(eps) * pnorm(-sens / (2 * s) - eps * s / sens) - delta }
  exp(uniroot(f, c(log(sens) - 20, log(sens) + 20), tol = 1e-13)$root)
}, ag$eps, ag$delta, ag$sens)
write.csv(ag, "analytic_gaussian.csv", row.names = FALSE)
