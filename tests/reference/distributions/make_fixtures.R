# Reference values for cellsafe's count distributions (tests/distributions/).
#
# Run from this directory:  Rscript make_fixtures.R
# Needs R with the actuar package (Debian: apt-get install r-base-core r-cran-actuar).
#
# Parameterizations (gamlss.dist's, as in cellsafe):
#   Poisson(mu)          dpois(k, mu)
#   NBI(mu, sigma)       dnbinom(k, size = 1/sigma, mu = mu)
#   PIG(mu, sigma)       actuar::dpoisinvgauss(k, mean = mu, shape = mu/sigma)
#                        (Poisson(mu g), g inverse Gaussian with mean 1 and shape 1/sigma,
#                         so mu g is inverse Gaussian with mean mu and shape mu/sigma)
#   GAF(mu, sigma, nu)   W ~ Gamma(shape = mu^(2-nu)/sigma^2, scale = sigma^2 mu^(nu-1)),
#                        Y = floor(W + 1/2): P(0) = pgamma(1/2), P(y) = pgamma(y+1/2) - pgamma(y-1/2).
#                        The difference is taken on the smaller tail (lower.tail = FALSE above
#                        the mean); where it keeps fewer than 4 significant digits of the larger
#                        term, the interval probability comes from integrate(dgamma) instead.
#
# Outputs (only values above 1e-13 are kept for the grids, to keep the files small):
#   pmf_grid.csv     family, mu, sigma, nu, k, pmf   (k = 0..60 on the grid below)
#   tails.csv        family, mu, sigma, nu, k, sf    (upper tails P(X > k), far into the tail)
#   extreme.csv      family, mu, sigma, nu, k, pmf   (mu 1e-3 and 1e6, sigma 1e-4 and 100)

suppressPackageStartupMessages(library(actuar))

fmt <- function(x) sprintf("%.16e", x)

gaf_pmf <- function(k, mu, sigma, nu) {
  shape <- mu^(2 - nu) / sigma^2
  scale <- sigma^2 * mu^(nu - 1)
  sapply(k, function(y) {
    if (y == 0) return(pgamma(0.5, shape = shape, scale = scale))
    lo <- y - 0.5
    hi <- y + 0.5
    upper <- lo > shape * scale
    a <- pgamma(lo, shape = shape, scale = scale, lower.tail = !upper)
    b <- pgamma(hi, shape = shape, scale = scale, lower.tail = !upper)
    d <- if (upper) a - b else b - a
    if (d >= 1e-4 * max(a, b)) return(d)
    integrate(function(w) dgamma(w, shape = shape, scale = scale), lo, hi,
              rel.tol = 1e-13, abs.tol = 0)$value
  })
}

gaf_sf <- function(k, mu, sigma, nu) {
  shape <- mu^(2 - nu) / sigma^2
  scale <- sigma^2 * mu^(nu - 1)
  pgamma(k + 0.5, shape = shape, scale = scale, lower.tail = FALSE)
}

rows <- list()
add <- function(family, mu, sigma, nu, k, value) {
  keep <- is.finite(value) & value > 1e-13
  if (any(keep)) {
    rows[[length(rows) + 1]] <<- data.frame(
      family = family, mu = mu, sigma = sigma, nu = nu, k = k[keep], value = fmt(value[keep])
    )
  }
}

mus <- c(0.01, 0.1, 0.5, 1, 2, 5, 10, 40)
sigmas <- c(0.05, 0.5, 1, 5, 10)
nus <- c(-0.5, -0.25, 0, 1)
k <- 0:60
for (mu in mus) {
  add("poisson", mu, NA, NA, k, dpois(k, mu))
  for (sigma in sigmas) {
    add("nbi", mu, sigma, NA, k, dnbinom(k, size = 1 / sigma, mu = mu))
    add("pig", mu, sigma, NA, k, dpoisinvgauss(k, mean = mu, shape = mu / sigma))
    for (nu in nus) add("gaf", mu, sigma, nu, k, gaf_pmf(k, mu, sigma, nu))
  }
}
grid <- do.call(rbind, rows)
names(grid)[6] <- "pmf"
write.csv(grid, "pmf_grid.csv", row.names = FALSE, quote = FALSE, na = "")

# Upper tails far out (values down to 1e-300).
rows <- list()
addt <- function(family, mu, sigma, nu, k, value) {
  keep <- is.finite(value) & value > 1e-300
  if (any(keep)) rows[[length(rows) + 1]] <<- data.frame(
    family = family, mu = mu, sigma = sigma, nu = nu, k = k[keep], sf = fmt(value[keep])
  )
}
tk <- c(0, 1, 2, 5, 10, 20, 50, 100, 200, 400)
for (mu in c(0.01, 1, 10, 40)) {
  addt("poisson", mu, NA, NA, tk, ppois(tk, mu, lower.tail = FALSE))
  for (sigma in c(0.05, 1, 10)) {
    addt("nbi", mu, sigma, NA, tk, pnbinom(tk, size = 1 / sigma, mu = mu, lower.tail = FALSE))
    for (nu in c(-0.5, 0, 1)) addt("gaf", mu, sigma, nu, tk, gaf_sf(tk, mu, sigma, nu))
  }
}
# PIG upper tails: actuar's pmf summed from k + 1 out to where the terms (which decay like
# (2 sigma mu / (1 + 2 sigma mu))^j) are negligible, smallest terms first.
pig_sf <- function(k, mu, sigma) {
  n <- max(k) + ceiling(60 * (2 * sigma * mu + 10))
  p <- dpoisinvgauss(0:n, mean = mu, shape = mu / sigma)
  sapply(k, function(kk) sum(rev(p[(kk + 2):(n + 1)])))
}
for (mu in c(0.01, 1, 10)) {
  for (sigma in c(0.05, 1, 10)) {
    pk <- c(0, 1, 5, 20, 50, 100)
    addt("pig", mu, sigma, NA, pk, pig_sf(pk, mu, sigma))
  }
}
tails <- do.call(rbind, rows)
write.csv(tails, "tails.csv", row.names = FALSE, quote = FALSE, na = "")

# Extreme parameters: a few counts around the mean and in both tails.
rows <- list()
adde <- function(family, mu, sigma, nu, k, value) {
  keep <- is.finite(value) & value > 1e-300
  if (any(keep)) rows[[length(rows) + 1]] <<- data.frame(
    family = family, mu = mu, sigma = sigma, nu = nu, k = k[keep], pmf = fmt(value[keep])
  )
}
for (mu in c(1e-3, 1e6)) {
  for (sigma in c(1e-4, 100)) {
    sd_nb <- sqrt(mu + sigma * mu^2)
    kk <- unique(pmax(0, round(c(0, 1, 2, mu - 3 * sd_nb, mu - sd_nb, mu, mu + sd_nb, mu + 3 * sd_nb, mu + 10 * sd_nb))))
    adde("nbi", mu, sigma, NA, kk, dnbinom(kk, size = 1 / sigma, mu = mu))
    # actuar's dpoisinvgauss is not reliable at mu = 1e6 (NaN for sigma = 1e-4; for sigma = 100
    # it gives 6.6e-7 at k = mu where the mixing density gives sqrt(sigma^-1 / (2 pi)) / mu = 4.0e-8):
    # the tests check PIG there by sum-to-one, mean and variance instead.
    if (mu < 1e3) adde("pig", mu, sigma, NA, kk, dpoisinvgauss(kk, mean = mu, shape = mu / sigma))
    for (nu in c(-0.5, 0, 1)) {
      sd_g <- sqrt(sigma^2 * mu^nu + 1 / 12)
      kg <- unique(pmax(0, round(c(0, 1, 2, mu - 3 * sd_g, mu - sd_g, mu, mu + sd_g, mu + 3 * sd_g))))
      adde("gaf", mu, sigma, nu, kg, gaf_pmf(kg, mu, sigma, nu))
    }
  }
  sd_p <- sqrt(mu)
  kp <- unique(pmax(0, round(c(0, 1, 2, mu - 5 * sd_p, mu, mu + 5 * sd_p, mu + 20 * sd_p))))
  adde("poisson", mu, NA, NA, kp, dpois(kp, mu))
}
extreme <- do.call(rbind, rows)
write.csv(extreme, "extreme.csv", row.names = FALSE, quote = FALSE, na = "")
