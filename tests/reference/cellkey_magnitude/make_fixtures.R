# Reference values for the cell key method on magnitude tables (cellsafe.mechanisms.CellKeyMagnitude).
#
# Perturbation table: ptable::create_num_ptable (sdcTools/ptable 1.0.0.9000, GitHub tenderle/ptable at
# a12838c, installed without its flexdashboard dashboard).  Per-cell perturbation: the cellKey package's own
# per-cell functions (sdcTools/cellKey 1.0.2 at 80bb032, file R/utils_numtabs.R: .scramble_ckeys, .para_m,
# .lookup_v_flex, .perturb_cell_flex), sourced from a checkout because the package itself needs sdcTable and
# sdcHierarchies, which are not installable here.  Cell keys (sum of the record keys modulo 1, over the records
# with a non-zero value unless use_zero_rkeys) and the largest contributions per published cell are computed in
# this script as cellKey's ck_setup describes them (each record is its own contributor).
#
# Run from this folder:  CELLKEY_SRC=/path/to/cellKey Rscript make_fixtures.R
# Writes nums_ptable.csv, records.csv, cells.csv and versions.txt.
library(data.table)
library(ptable)
src <- Sys.getenv("CELLKEY_SRC")
stopifnot(nzchar(src))
source(file.path(src, "R", "utils_numtabs.R"))
.ck_digits <- function() 3
.ck_debug <- function() FALSE

# the perturbation table: D = 10, V = 3, noise on a grid of 1/2, rows at 1, 5 and 10
pt <- create_num_ptable(D = 10, V = 3, step = 2, icat = c(1, 5, 10), type = "all")
ptab <- copy(pt@pTable)
fwrite(ptab, "nums_ptable.csv")
setnames(ptab, c("p_int_lb", "p_int_ub"), c("lb", "ub"))

# records: 40 enterprises in 3 sectors x 2 regions, skewed turnover with a few zeros, 8-digit record keys
set.seed(20261122)
n <- 40
rec <- data.table(
  sector = sample(c("A", "B", "C"), n, replace = TRUE, prob = c(0.5, 0.3, 0.2)),
  region = sample(c("N", "S"), n, replace = TRUE),
  turnover = round(rlnorm(n, meanlog = 5, sdlog = 1.6), 2),
  rkey = round(runif(n), 8)
)
rec$turnover[c(3, 17, 29)] <- 0
fwrite(rec, "records.csv")

# published cells: Total, sector, region, sector x region
cells <- rbind(
  data.table(sector = "Total", region = "Total"),
  data.table(sector = c("A", "B", "C"), region = "Total"),
  data.table(sector = "Total", region = c("N", "S")),
  CJ(sector = c("A", "B", "C"), region = c("N", "S"))
)
members <- lapply(seq_len(nrow(cells)), function(r) {
  which((cells$sector[r] == "Total" | rec$sector == cells$sector[r]) &
        (cells$region[r] == "Total" | rec$region == cells$region[r]))
})
cells$cv <- sapply(members, function(m) sum(rec$turnover[m]))
cells$n <- sapply(members, length)
cells$ck <- sapply(members, function(m) sum(rec$rkey[m]) %% 1)
cells$ck_nz <- sapply(members, function(m) sum(rec$rkey[m][rec$turnover[m] != 0]) %% 1)
top <- function(m, k) {
  x <- rec$turnover[m][order(-abs(rec$turnover[m]))]
  x[seq_len(min(k, length(x)))]
}

# setting A: top_k = 3, flex function fp = 400, p = (0.3, 0.05), q = 3, epsilon = (1, 0.5, 0.2),
# same_key = TRUE, use_zero_rkeys = FALSE, mu_c = 0
flexA <- list(fp = 400, p_small = 0.3, p_large = 0.05, q = 3, epsilon = c(1, 0.5, 0.2))
paramsA <- list(ptab = ptab, zs = 0, mu_c = 0, mult_params = flexA)
# setting B: top_k = 1, fp = 1000, p = (0.25, 0.05), q = 2, same_key = FALSE, use_zero_rkeys = TRUE,
# mu_c = 2 on the cells with at most 3 contributors
flexB <- list(fp = 1000, p_small = 0.25, p_large = 0.05, q = 2, epsilon = 1)
paramsB <- list(ptab = ptab, zs = 0, mu_c = 2, mult_params = flexB)

cells$sensitive_B <- cells$n <= 3
pertA <- pertB <- numeric(nrow(cells))
for (r in seq_len(nrow(cells))) {
  m <- members[[r]]
  x <- top(m, 3)
  ck <- .scramble_ckeys(cells$ck_nz[r], top_k = 3, same_key = TRUE)[seq_along(x)]
  pertA[r] <- .perturb_cell_flex(cv = cells$cv[r], x = x, ck = ck, lookup = rep("all", length(x)),
                                 prot_req = FALSE, params = paramsA)$cv_p
  ckB <- .scramble_ckeys(cells$ck[r], top_k = 1, same_key = FALSE)
  pertB[r] <- .perturb_cell_flex(cv = cells$cv[r], x = top(m, 1), ck = ckB, lookup = "all",
                                 prot_req = cells$sensitive_B[r], params = paramsB)$cv_p
}
cells$released_A <- pertA
cells$released_B <- pertB
fwrite(cells, "cells.csv")
writeLines(c(R.version.string, paste("ptable", packageVersion("ptable")), paste("data.table", packageVersion("data.table")),
             "cellKey 1.0.2 (R/utils_numtabs.R at 80bb032dd841a081cfa4bc4b8208669902d54ae2)"), "versions.txt")
