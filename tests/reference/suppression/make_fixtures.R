# Reference suppressions from Statistics Norway's GaussSuppression on its documented example data.
# Run from this folder: Rscript make_fixtures.R  (needs SSBtools and GaussSuppression, see peers notes)
suppressPackageStartupMessages({library(SSBtools); library(GaussSuppression)})
writeLines(c(paste("SSBtools", packageVersion("SSBtools")), paste("GaussSuppression", packageVersion("GaussSuppression"))),
           "versions.txt")

# d2 with a tenth of freq as frequencies (the SuppressSmallCounts examples)
d2 <- SSBtoolsData("d2")
d2$f <- round(d2$freq / 10)
write.csv(d2[, c("region", "county", "k_group", "main_income", "f")], "d2.csv", row.names = FALSE)

# 1. three-variable publication (all margins), maxN = 2, zeros not protected
a <- SuppressSmallCounts(data = d2, maxN = 2, freqVar = "f", dimVar = c("region", "county", "k_group"),
                         protectZeros = FALSE, secondaryZeros = FALSE)
write.csv(a, "d2_dimvar_maxn2.csv", row.names = FALSE)

# 2. formula publication, maxN = 3
b <- SuppressSmallCounts(data = d2, maxN = 3, freqVar = "f", formula = ~main_income * k_group + region + county - k_group,
                         protectZeros = FALSE, secondaryZeros = FALSE)
write.csv(b, "d2_formula_maxn3.csv", row.names = FALSE)

# 3. mun_accidents, maxN = 3
mun <- SSBtoolsData("mun_accidents")
write.csv(mun, "mun_accidents.csv", row.names = FALSE)
m <- SuppressSmallCounts(data = mun, maxN = 3, dimVar = 1:2, freqVar = 3, protectZeros = FALSE, secondaryZeros = FALSE)
write.csv(m, "mun_accidents_maxn3.csv", row.names = FALSE)
