# GaussSuppression on a 1e6-record, 6-variable hypercube: all 2-way margins, maxN = 2, zeros neither
# primary nor secondary, on the frequency table of the non-empty inner cells (extend0 = FALSE).
# Input: hypercube_table.csv.gz (made by make_hypercube_table.py). Run from this folder: Rscript make_hypercube.R
suppressPackageStartupMessages({library(SSBtools); library(GaussSuppression)})
d <- read.csv("hypercube_table.csv.gz", colClasses = c(rep("character", 6), "integer"))
for (method in c("none", "anySum")) {
  # "none": no singleton handling, as cellsafe; "anySum": the package's default for frequency tables
  t0 <- proc.time()[["elapsed"]]
  out <- SuppressSmallCounts(data = d, maxN = 2, freqVar = "n", formula = ~(geo + sex + age + edu + occ + cob)^2,
                             protectZeros = FALSE, secondaryZeros = FALSE, extend0 = FALSE,
                             singletonMethod = method, printInc = FALSE)
  cat(method, nrow(out), "cells", sum(out$primary), "primary", sum(out$suppressed), "suppressed",
      proc.time()[["elapsed"]] - t0, "s\n")
  con <- gzfile(sprintf("hypercube_maxn2_%s.csv.gz", tolower(method)), "w")
  write.csv(out, con, row.names = FALSE)
  close(con)
}
writeLines(c(paste("SSBtools", packageVersion("SSBtools")), paste("GaussSuppression", packageVersion("GaussSuppression")),
             paste("R", getRversion())), "hypercube_versions.txt")
