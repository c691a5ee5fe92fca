# Reference ptable for D = 5, V = 3, js = 2 (001 section 2), computed independently of cellsafe.
#
# Each row i = 1..ncat (ncat = D + js + 1) solves the maximum-entropy problem of the R package ptable
# (pt_optim_entropy with optim = 1, mono = TRUE): minimise sum(p * log2(p)) over the allowed deviations
# v (released values max(0, i - D)..i + D, excluding 1..js) subject to sum(p) = 1, sum(v * p) = 0,
# sum(v^2 * p) <= V, p <= 1, p >= 1e-7 and p non-decreasing up to v = 0; NLopt's SLSQP through nloptr.
# Row 0 maps 0 to 0.  Writes ptable_D5_V3_js2.csv (i, j, p).
# Run from this folder: Rscript make_fixtures.R
library(nloptr)

D <- 5; V <- 3; js <- 2; eps <- 1e-7
ncat <- D + js + 1
out <- data.frame(i = 0L, j = 0L, p = 1)
for (i in 1:ncat) {
  j <- seq(max(i - D, 0), i + D)
  j <- j[!(j %in% seq_len(js))]
  v <- j - i
  n <- length(v)
  z <- if (0 %in% v) which(v == 0) else 0
  ineq <- function(x) {
    cons <- c(x - 1, sum(v^2 * x) - V)
    jac <- rbind(diag(1, n, n), v^2)
    if (z > 1) for (k in 1:(z - 1)) {
      cons <- c(cons, x[k] - x[k + 1])
      g <- rep(0, n); g[k] <- 1; g[k + 1] <- -1
      jac <- rbind(jac, g)
    }
    list(constraints = cons, jacobian = jac)
  }
  eq <- function(x) list(constraints = c(sum(x) - 1, sum(v * x)), jacobian = rbind(rep(1, n), v))
  f <- function(x) list(objective = sum(x * log2(x)), gradient = log2(x) + 1 / log(2))
  res <- nloptr(x0 = rep(1 / n, n), eval_f = f, lb = rep(eps, n), ub = rep(1, n),
                eval_g_ineq = ineq, eval_g_eq = eq,
                opts = list(algorithm = "NLOPT_LD_SLSQP", xtol_rel = 1e-12, ftol_rel = 1e-14, maxeval = 100000))
  out <- rbind(out, data.frame(i = i, j = j, p = res$solution))
}
write.csv(out, "ptable_D5_V3_js2.csv", row.names = FALSE)
