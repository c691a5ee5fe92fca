# What an R user would run instead of cellsafe's saturated synthesis: one draw per cell of the
# dense vector of cell means (the original counts, alpha for random zeros).
#
# Usage: Rscript bench_synthesis.R MEANS_FILE N_CELLS SIGMA REPEAT
#   MEANS_FILE  the cell means as N_CELLS little-endian float64 values (written by bench_synthesis.py)
#
# Prints one line per sampler, "name seconds" (the best elapsed time of REPEAT runs, measured inside
# R with system.time, reading the file excluded), then the R and actuar versions.
#   poisson  rpois(n, mu)
#   nbi      rnbinom(n, size = 1/sigma, mu = mu)                  NBI(mu, sigma) of gamlss.dist
#   pig      actuar::rpoisinvgauss(n, mean = mu, shape = mu/sigma)  PIG(mu, sigma) of gamlss.dist
#            (the parameterization of tests/reference/distributions/make_fixtures.R)

args <- commandArgs(trailingOnly = TRUE)
path <- args[1]
n <- as.integer(args[2])
sigma <- as.numeric(args[3])
repeats <- as.integer(args[4])

con <- file(path, "rb")
mu <- readBin(con, what = "double", n = n, size = 8, endian = "little")
close(con)
stopifnot(length(mu) == n)

best <- function(expr_fn) {
  times <- vapply(seq_len(repeats), function(i) system.time(expr_fn())[["elapsed"]], numeric(1))
  min(times)
}

set.seed(1)
cat("poisson", best(function() rpois(n, mu)), "\n")
cat("nbi", best(function() rnbinom(n, size = 1 / sigma, mu = mu)), "\n")
have_actuar <- requireNamespace("actuar", quietly = TRUE)
if (have_actuar) {
  cat("pig", best(function() actuar::rpoisinvgauss(n, mean = mu, shape = mu / sigma)), "\n")
  cat("actuar", as.character(packageVersion("actuar")), "\n")
} else {
  cat("actuar absent\n")
}
cat("R", paste(R.version$major, R.version$minor, sep = "."), "\n")
