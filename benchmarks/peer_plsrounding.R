# Peer of benchmarks/bench_peers_published.py: small count rounding with Statistics Norway's
# SmallCountRounding (PLSrounding), timed in the call.  Usage: Rscript peer_plsrounding.R records.csv out.csv
args <- commandArgs(trailingOnly = TRUE)
suppressPackageStartupMessages({
  library(data.table)
  library(SmallCountRounding)
})
records <- as.data.frame(fread(args[1], colClasses = "character"))
t0 <- proc.time()[["elapsed"]]
res <- PLSrounding(records, formula = ~(geo + sex + age + edu + occ + cob)^3, roundBase = 3)
t1 <- proc.time()[["elapsed"]]
fwrite(res$publish, args[2])
cat(sprintf("call %.3f published %d\n", t1 - t0, nrow(res$publish)), file = stderr())
