# Five implicates of palmerpenguins by R synthpop's syn(method = "cart"), the reference the tests
# hold cellsafe's CART synthesis against (pMSE measured by cellsafe's propensity metric).
# Same records and visit sequence as the tests: the file's column order, the first variable
# sampled, CART after (minbucket 5); species, island, sex and year as factors; "NA" missing.
# synthpop is not in Debian: R CMD INSTALL its public sources (and mipfp, cmm, broman) into a
# private library.  Run from this folder:  R_LIBS_USER=/path/to/Rlib Rscript make_fixtures.R
suppressPackageStartupMessages(library(synthpop))
d <- read.csv("../penguins/penguins.csv", na.strings = c("NA", ""), stringsAsFactors = FALSE)
for (f in c("species", "island", "sex", "year")) d[[f]] <- factor(d[[f]])
s <- syn(d, method = "cart", m = 5, seed = 20260521, print.flag = FALSE)
for (i in 1:5) write.csv(s$syn[[i]], sprintf("penguins_synthpop_%d.csv", i), row.names = FALSE, na = "")
writeLines(sprintf("synthpop %s, R %s.%s", packageVersion("synthpop"), R.version$major, R.version$minor), "VERSION")
