# Reference values for tests/fitting: IPF fitted values from loglin() and Poisson GLM
# estimates and standard errors from glm(family = poisson), both from R's stats package.
#
# Inputs (long frequency tables, variables + count) in this folder:
#   ucb_admissions.csv, hair_eye_color.csv, titanic.csv: R's datasets package (public domain
#   data; copied from ../shared/data/rdatasets/, written with R 4.2);
#   random4.csv: a random 3 x 4 x 2 x 5 table written by this script (seed below).
# Factor levels follow the order of first appearance in each CSV.
#
# Run from this folder:  Rscript make_fixtures.R
# Outputs: cases.csv (one row per case: input, model, deviance, df), ipf_<case>.csv
# (variables + fitted), glm_<case>.csv (term, estimate, se).

set.seed(20240611)
g <- expand.grid(a = c("a1", "a2", "a3"), b = c("b1", "b2", "b3", "b4"),
                 c = c("c1", "c2"), d = c("d1", "d2", "d3", "d4", "d5"))
g <- g[, c("a", "b", "c", "d")]
g$count <- rpois(nrow(g), rgamma(nrow(g), shape = 2, rate = 0.25))
write.csv(g, "random4.csv", row.names = FALSE, quote = FALSE)

read_long <- function(path) {
  df <- read.csv(path, stringsAsFactors = FALSE)
  vars <- setdiff(names(df), "count")
  for (v in vars) df[[v]] <- factor(df[[v]], levels = unique(df[[v]]))
  df
}

cases <- list(
  list(case = "ucb_2way", input = "ucb_admissions.csv", model = "Admit*Gender + Admit*Dept + Gender*Dept"),
  list(case = "ucb_cond", input = "ucb_admissions.csv", model = "Admit*Dept + Gender*Dept"),
  list(case = "hair_2way", input = "hair_eye_color.csv", model = "(Hair + Eye + Sex)^2"),
  list(case = "hair_indep", input = "hair_eye_color.csv", model = "Hair*Eye + Sex"),
  list(case = "titanic_2way", input = "titanic.csv", model = "(Class + Sex + Age + Survived)^2"),
  list(case = "titanic_3way", input = "titanic.csv", model = "Class*Sex*Survived + Age*Survived"),
  list(case = "random4_2way", input = "random4.csv", model = "(a + b + c + d)^2"),
  list(case = "random4_mixed", input = "random4.csv", model = "a*b*c + c*d")
)

rows <- list()
for (cs in cases) {
  df <- read_long(cs$input)
  vars <- setdiff(names(df), "count")
  f <- as.formula(paste("count ~", cs$model))
  tab <- xtabs(as.formula(paste("count ~", paste(vars, collapse = " + "))), data = df)
  # generating class from the model's terms
  tl <- attr(terms(f), "factors")
  term_vars <- lapply(seq_len(ncol(tl)), function(j) rownames(tl)[tl[, j] > 0])
  maximal <- Filter(function(t) !any(sapply(term_vars, function(o) length(o) > length(t) && all(t %in% o))), term_vars)
  margin <- lapply(maximal, function(t) match(t, vars))
  lf <- loglin(tab, margin, fit = TRUE, eps = 1e-13, iter = 5000, print = FALSE)
  fit <- as.data.frame(as.table(lf$fit), responseName = "fitted")
  write.csv(fit, paste0("ipf_", cs$case, ".csv"), row.names = FALSE, quote = FALSE)

  gm <- glm(f, family = poisson, data = df, control = glm.control(epsilon = 1e-14, maxit = 200))
  s <- summary(gm)$coefficients
  co <- coef(gm)
  est <- data.frame(term = names(co), estimate = unname(co), se = NA_real_)
  est$se[match(rownames(s), est$term)] <- s[, "Std. Error"]
  write.csv(est, paste0("glm_", cs$case, ".csv"), row.names = FALSE, quote = TRUE)
  rows[[length(rows) + 1]] <- data.frame(case = cs$case, input = cs$input, model = cs$model,
    deviance = sprintf("%.15g", deviance(gm)), df_residual = gm$df.residual,
    n_coef = length(co), loglin_lrt = sprintf("%.15g", lf$lrt))
}
write.csv(do.call(rbind, rows), "cases.csv", row.names = FALSE, quote = TRUE)
