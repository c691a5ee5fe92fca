# synthpop's syn(method = "cart") on a CSV file: m implicates written as CSV, times in a JSON file.
# Usage: Rscript synthpop_cart.R DATA.csv OUTDIR M SEED FACTORS [VISIT]
#   FACTORS: comma-separated columns read as factors (others as R reads them; "NA" and "" are missing)
#   VISIT:   comma-separated visit sequence (default: the file's column order)
# Needs synthpop (not in Debian): R CMD INSTALL its public sources into a private library and set R_LIBS_USER.
args <- commandArgs(trailingOnly = TRUE)
data_path <- args[1]; out <- args[2]; m <- as.integer(args[3]); seed <- as.integer(args[4])
factors <- if (length(args) >= 5 && nchar(args[5])) strsplit(args[5], ",")[[1]] else character(0)
t_load <- proc.time()
suppressPackageStartupMessages(library(synthpop))
load_time <- proc.time() - t_load
d <- read.csv(data_path, na.strings = c("NA", ""), check.names = FALSE, stringsAsFactors = FALSE)
for (f in factors) d[[f]] <- factor(d[[f]])
for (f in names(d)) if (is.character(d[[f]])) d[[f]] <- factor(d[[f]])
visit <- if (length(args) >= 6 && nchar(args[6])) match(strsplit(args[6], ",")[[1]], names(d)) else seq_along(d)
original_names <- names(d)
names(d) <- make.names(names(d), unique = TRUE)  # synthpop refuses names such as "income>50K"
t0 <- proc.time()
s <- syn(d, method = "cart", visit.sequence = visit, m = m, seed = seed, print.flag = FALSE, minnumlevels = 1)
t1 <- proc.time() - t0
dir.create(out, showWarnings = FALSE, recursive = TRUE)
sets <- if (m == 1) list(s$syn) else s$syn
for (i in seq_along(sets)) names(sets[[i]]) <- original_names
for (i in seq_along(sets)) write.csv(sets[[i]], file.path(out, sprintf("synthpop_%d.csv", i)), row.names = FALSE, na = "")
cat(sprintf('{"cpu_seconds": %.3f, "elapsed_seconds": %.3f, "load_cpu_seconds": %.3f, "synthpop": "%s", "R": "%s", "records": %d, "m": %d}\n',
            t1[["user.self"]] + t1[["sys.self"]], t1[["elapsed"]], load_time[["user.self"]] + load_time[["sys.self"]],
            as.character(packageVersion("synthpop")), paste(R.version$major, R.version$minor, sep = "."), nrow(d), m),
    file = file.path(out, "synthpop_time.json"))
