# What an R user would script instead of `cellsafe synthesize` on a frequency table (whole process):
# read the CSV, draw one synthetic count per non-zero cell, drop the zeros, write the CSV.
# Usage: Rscript synthesize_table.R IN.csv OUT.csv poisson|nbi|pig SIGMA SEED
suppressPackageStartupMessages(library(data.table))
args <- commandArgs(trailingOnly = TRUE)
family <- args[3]; sigma <- as.numeric(args[4]); set.seed(as.integer(args[5]))
tab <- fread(args[1], colClasses = "character")  # categories as written, as cellsafe reads them
mu <- as.numeric(tab[["count"]])
tab[, count := switch(family,
  poisson = rpois(length(mu), mu),
  nbi = rnbinom(length(mu), size = 1 / sigma, mu = mu),
  pig = actuar::rpoisinvgauss(length(mu), mean = mu, shape = mu / sigma))]
fwrite(tab[count > 0], args[2])
