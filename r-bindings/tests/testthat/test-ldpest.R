test_that("plugins are listed with their origin", {
  plugins <- ldp_plugins()
  expect_s3_class(plugins, "data.frame")
  expect_true(all(c("randomized-response", "laplace-histogram", "linf-sampling", "frequency", "walsh") %in% plugins$name))
  expect_equal(colnames(plugins), c("name", "kind", "family", "origin", "version"))
  expect_equal(rownames(plugins), as.character(seq_len(nrow(plugins))))
})

test_that("a third-party plugin installed in Python is visible from R", {
  skip_if(Sys.getenv("LDPEST_EXPECT_OUE") != "1", "the test runner did not install the example plugin")
  plugins <- ldp_plugins()
  expect_true("optimized-unary-encoding" %in% plugins$name)
  expect_equal(plugins$origin[plugins$name == "optimized-unary-encoding"], "ldpest-oue")
  r <- ldp_privatize(rep(c("x", "y", "y", "y"), 2000), "optimized-unary-encoding", epsilon = 1,
                     categories = c("x", "y"), seed = 1)
  p <- ldp_estimate(r)
  expect_equal(names(dimnames(p)), "category")
  expect_lt(abs(attr(p, "unprojected")["y"] - 0.75), 5 * attr(p, "stderr")["y"])
})

test_that("multinomial estimates are labelled arrays with standard errors", {
  x <- rep(c("car", "bus", "bike", "bus"), 2500)
  for (mechanism in c("randomized-response", "unary-randomized-response", "laplace")) {
    r <- ldp_privatize(x, mechanism, epsilon = 2, categories = c("car", "bus", "bike"), seed = 7)
    expect_s3_class(r, "ldp_reports")
    p <- ldp_estimate(r)
    expect_equal(dimnames(p), list(category = c("car", "bus", "bike")))
    expect_equal(attr(p, "n"), 10000)
    expect_equal(attr(p, "epsilon"), 2)
    expect_equal(attr(p, "estimator"), "frequency")
    expect_equal(sum(p), 1, tolerance = 1e-12)
    truth <- c(car = 0.25, bus = 0.5, bike = 0.25)
    z <- abs(attr(p, "unprojected") - truth) / attr(p, "stderr")
    expect_true(all(z < 5), info = mechanism)
    expect_true(all(attr(p, "lower") < attr(p, "upper")))
    table <- as.data.frame(p)
    expect_equal(table$category, c("car", "bus", "bike"))
  }
})

test_that("factors and integer categories work", {
  r <- ldp_privatize(factor(c("lo", "hi", "hi")), "randomized-response", epsilon = 1, categories = c("lo", "hi"), seed = 1)
  expect_equal(length(r$values), 3)
  r <- ldp_privatize(c(1, 2, 3, 3), "randomized-response", epsilon = 1, categories = 1:3, seed = 1)
  expect_warning(p <- ldp_estimate(r), "uninformative", class = "ldpest_warning")
  expect_equal(dimnames(p)$category, c("1", "2", "3"))
})

test_that("reports collected elsewhere are estimated from their parameters", {
  collected <- c(rep("yes", 600), rep("no", 400))
  p <- ldp_estimate(collected, mechanism = "randomized-response", epsilon = 1, categories = c("yes", "no"))
  expect_equal(attr(p, "n"), 1000)
  e <- exp(1)
  expect_equal(unname(attr(p, "unprojected")["yes"]), (0.6 - 1 / (e + 1)) / ((e - 1) / (e + 1)), tolerance = 1e-6)
})

test_that("histograms: densities on dims named after the columns", {
  set.seed(1)
  x <- data.frame(age = runif(4000, 18, 90), income = runif(4000, 0, 100))
  r <- ldp_privatize(x, "laplace-histogram", epsilon = 1, low = c(18, 0), high = c(90, 100), bins = c(3, 2),
                     names = c("age", "income"), seed = 2)
  d <- ldp_estimate(r)
  expect_equal(dim(d), c(3L, 2L))
  expect_equal(names(dimnames(d)), c("age", "income"))
  expect_equal(attr(d, "estimator"), "histogram-cdf")
  expect_equal(sum(d) * attr(d, "cell_volume"), 1, tolerance = 1e-10)
  m <- ldp_estimate(r, estimator = "histogram-mean", projection = "none")
  expect_equal(attr(m, "projection"), "none")
  one <- ldp_privatize(runif(500), "laplace-histogram", epsilon = 1, low = 0, high = 1, bins = 4, seed = 3)
  expect_equal(length(ldp_estimate(one)), 4)
})

test_that("histograms whose cells a frequency oracle sends: oracle-histogram", {
  set.seed(2)
  age <- c(runif(3000, 18, 90), runif(1000, 90, 100))
  r <- ldp_privatize(data.frame(age = age), "oracle-histogram", epsilon = 2, low = 18, high = 90, bins = 6,
                     oracle = "unary-randomized-response", seed = 5)
  d <- ldp_estimate(r, projection = "none")
  expect_equal(names(dimnames(d)), "age")
  expect_equal(attr(d, "oracle"), "unary-randomized-response")
  expect_lt(abs(attr(d, "outside_unprojected") - 0.25), 5 * attr(d, "outside_stderr"))
  a <- ldp_estimate(r, estimator = "histogram-mean", projection = "auto")
  expect_true(attr(a, "projection") %in% c("simplex", "positive", "shrink", "ibu"))
  m <- ldp_estimate(r, estimator = "histogram-likelihood")
  expect_equal(attr(m, "projection"), "mle")
  expect_equal(attr(m, "mle_converged"), 1)
  expect_gte(attr(m, "mle_passes"), 2)
  expect_equal(sum(m) * attr(m, "cell_volume") + attr(m, "outside_mass"), 1, tolerance = 1e-12)
  expect_error(ldp_privatize(age, "oracle-histogram", epsilon = 1, low = 18, high = 90, bins = 6, oracle = "duchi"),
               "the oracle must be a frequency oracle", class = "ldpest_error")
})

test_that("shrinkage toward uniform and the iterative Bayesian update's limit as projections", {
  set.seed(4)
  answers <- sample(c("a", "b", "c", "d", "e"), 2000, replace = TRUE)
  r <- ldp_privatize(answers, "unary-randomized-response", epsilon = 0.5, categories = c("a", "b", "c", "d", "e"),
                     seed = 8)
  s <- ldp_estimate(r, projection = "shrink")
  expect_equal(attr(s, "projection"), "shrink")
  expect_true(attr(s, "shrink_weight") >= 0 && attr(s, "shrink_weight") <= 1)
  expect_equal(sum(s), 1, tolerance = 1e-12)
  i <- ldp_estimate(r, projection = "ibu")
  expect_equal(attr(i, "projection"), "ibu")
  expect_true(all(i >= 0))
  expect_error(ldp_estimate(ldp_privatize(answers, "laplace", epsilon = 1, categories = c("a", "b", "c", "d", "e"),
                                          seed = 9), projection = "ibu"),
               "has no support counts", class = "ldpest_error")
})

test_that("the maximum-likelihood frequencies of the reports themselves: frequency-likelihood", {
  set.seed(3)
  answers <- sample(c("a", "b", "c", "d"), 3000, replace = TRUE, prob = c(0.6, 0.3, 0.1, 0))
  r <- ldp_privatize(answers, "subset-selection", epsilon = 2, categories = c("a", "b", "c", "d"), seed = 7)
  m <- ldp_estimate(r, estimator = "frequency-likelihood")
  expect_equal(attr(m, "projection"), "mle")
  expect_equal(attr(m, "mle_converged"), 1)
  expect_gte(attr(m, "mle_passes"), 2)
  expect_equal(sum(m), 1, tolerance = 1e-12)
  expect_true(all(m >= 0))
  expect_error(ldp_estimate(r, estimator = "frequency-likelihood", estimator_params = list(max_passes = 1)),
               "max_passes must be an integer >= 2", class = "ldpest_error")
})

test_that("series densities on a grid with coefficients", {
  r <- ldp_privatize(rbeta(3000, 2, 2), "linf-sampling", epsilon = 1, basis = "trigonometric", k = 5, seed = 4)
  d <- ldp_estimate(r, estimator_params = list(grid = 50))
  expect_equal(names(dimnames(d)), "x")
  expect_equal(length(d), 50)
  expect_equal(length(attr(d, "coefficient")), 5)
  expect_equal(attr(d, "k"), 5)
  l <- ldp_privatize(runif(200), "laplace-series", epsilon = 1, basis = "walsh", k = 4, seed = 4)
  expect_equal(attr(ldp_estimate(l), "mechanism"), "laplace-series")
})

test_that("errors raised in Python reach R with the same message", {
  expect_error(ldp_privatize(c("a", "z"), "randomized-response", epsilon = 1, categories = c("a", "b")),
               "1 value\\(s\\) outside the declared categories \\['a', 'b'\\]: 'z' \\(first at element 2\\)")
  expect_error(ldp_privatize(c("a", "b"), "randomized-response", epsilon = 0, categories = c("a", "b")),
               "epsilon must be a finite number > 0, got 0", fixed = TRUE)
  expect_error(ldp_privatize(c("a", "b"), "warner", epsilon = 1), "unknown mechanism 'warner'; known mechanisms:")
  expect_error(ldp_privatize(c(0.5, NA), "linf-sampling", epsilon = 1, basis = "walsh", k = 2), "data: 1 record(s) hold NA",
               fixed = TRUE)
  r <- ldp_privatize(c("a", "b"), "unary-randomized-response", epsilon = 1, categories = c("a", "b"), seed = 1)
  expect_error(ldp_estimate(matrix(0, 2, 3), mechanism = "unary-randomized-response", epsilon = 1, categories = c("a", "b")),
               "reports have width 3 but mechanism 'unary-randomized-response' has 2 categories", fixed = TRUE)
  expect_error(ldp_estimate(r, mechanism = "laplace"), "carry their own mechanism")
})

test_that("the secure generator is the default and seeds reproduce", {
  a <- ldp_privatize(rep("a", 50), "randomized-response", epsilon = 0.1, categories = c("a", "b", "c"))
  expect_equal(a$rng, "secure")
  b1 <- ldp_privatize(rep("a", 50), "randomized-response", epsilon = 0.1, categories = c("a", "b", "c"), seed = 9)
  b2 <- ldp_privatize(rep("a", 50), "randomized-response", epsilon = 0.1, categories = c("a", "b", "c"), seed = 9)
  expect_identical(b1$values, b2$values)
})

# -- R-native results (issue 13) ------------------------------------------------------------
.survey <- function(n = 10000, seed = 7, epsilon = 2, ...) {
  x <- factor(rep(c("car", "bus", "bike", "bus"), n / 4), levels = c("car", "bus", "bike"))
  ldp_privatize(x, "randomized-response", epsilon = epsilon, seed = seed, ...)
}

test_that("a factor's levels are the default categories, in their order", {
  p <- ldp_estimate(.survey())
  expect_equal(dimnames(p), list(category = c("car", "bus", "bike")))
  collected <- factor(c("no", "yes", "no"), levels = c("yes", "no"))
  q <- suppressWarnings(ldp_estimate(collected, mechanism = "randomized-response", epsilon = 1))
  expect_equal(dimnames(q)$category, c("yes", "no"))
})

test_that("print, summary and as.data.frame are computed from the values", {
  p <- ldp_estimate(.survey())
  table <- as.data.frame(p)
  expect_equal(names(table), c("category", "probability", "stderr", "lower", "upper"))
  expect_equal(table$probability, as.vector(unclass(p)))
  expect_equal(table$stderr, as.vector(attr(p, "stderr")))
  printed <- capture.output(print(p))
  expect_match(printed[1], "frequency from randomized-response \\(epsilon = 2, n = 10000")
  expect_true(any(grepl(sprintf("%.4f", table$probability[2]), printed, fixed = TRUE)))
  expect_s3_class(summary(p), "summary.ldp_estimate")
  expect_match(capture.output(print(summary(p)))[1], "Estimate by frequency from 10000 reports")
})

test_that("arithmetic gives a plain labelled array that prints its own values", {
  p <- ldp_estimate(.survey())
  percent <- round(p * 100, 1)
  expect_false(inherits(percent, "ldp_estimate"))
  expect_null(attr(percent, "stderr"))
  expect_equal(names(dimnames(percent)), "category")
  expect_equal(as.vector(percent), round(as.vector(unclass(p)) * 100, 1))
  expect_equal(trimws(capture.output(print(percent))[3]), paste(format(as.vector(percent), nsmall = 1), collapse = " "))
})

test_that("coef and confint; confint at another level recomputes the exact interval", {
  p <- ldp_estimate(.survey())
  expect_equal(coef(p), c(car = p[["car"]], bus = p[["bus"]], bike = p[["bike"]]))
  ci <- confint(p)
  expect_equal(dim(ci), c(3L, 2L))
  expect_equal(colnames(ci), c("2.5 %", "97.5 %"))
  expect_equal(unname(ci[, 1]), as.vector(attr(p, "lower")))
  narrow <- confint(p, level = 0.5)
  expect_true(all(narrow[, 1] > ci[, 1] & narrow[, 2] < ci[, 2]))
  again <- ldp_estimate(.survey(), level = 0.5)
  expect_equal(unname(narrow[, 1]), as.vector(attr(again, "lower")), tolerance = 1e-12)
  expect_equal(confint(p, "bus"), ci["bus", , drop = FALSE])
  s <- ldp_estimate(ldp_privatize(rbeta(2000, 2, 2), "linf-sampling", epsilon = 1, basis = "trigonometric",
                                  k = 3, seed = 4))
  expect_equal(coef(s), as.vector(attr(s, "coefficient")))
})

test_that("plot draws bars, a density band and a 2-D image with base graphics", {
  file <- tempfile(fileext = ".png")
  grDevices::png(file)
  on.exit({ grDevices::dev.off(); unlink(file) })
  p <- ldp_estimate(.survey())
  expect_identical(plot(p), p)
  s <- ldp_estimate(ldp_privatize(runif(2000), "linf-sampling", epsilon = 1, basis = "trigonometric", k = 3,
                                  seed = 4))
  expect_identical(plot(s), s)
  x <- data.frame(age = runif(2000, 18, 90), income = runif(2000, 0, 100))
  d <- ldp_estimate(ldp_privatize(x, "laplace-histogram", epsilon = 1, low = c(18, 0), high = c(90, 100),
                                  bins = c(3, 2), seed = 2))
  expect_equal(names(dimnames(d)), c("age", "income"))  # the data.frame's column names
  expect_identical(plot(d), d)
})

test_that("Python warnings are R warnings and errors one R condition without a traceback", {
  expect_warning(ldp_estimate(c("a", "b"), mechanism = "randomized-response", epsilon = 1, categories = c("a", "b")),
                 "uninformative", class = "ldpest_warning")
  err <- tryCatch(ldp_estimate(c("a", "z"), mechanism = "randomized-response", epsilon = 1, categories = c("a", "b")),
                  ldpest_error = function(e) e)
  expect_s3_class(err, "ldpest_error")
  expect_match(conditionMessage(err), "^ldpest: reports: 1 value\\(s\\) outside .* \\(first at element 2\\)$")
  expect_false(grepl("Traceback", conditionMessage(err)))
  expect_error(ldp_estimate(c("a", "b"), mechanism = "no-such-mechanism", epsilon = 1), class = "ldpest_error")
})

test_that("keep probability instead of epsilon, and codes of collected reports", {
  r <- .survey(epsilon = NULL, keep = 0.8)
  expect_equal(r$epsilon, log(0.8 * 2 / 0.2))
  p <- suppressWarnings(ldp_estimate(c(0, 2, 1, 1), mechanism = "randomized-response", keep = 0.8,
                                     categories = c("a", "b", "c"), codes = "0-based"))
  expect_equal(attr(p, "count"), array(c(1, 2, 1), dim = 3, dimnames = list(category = c("a", "b", "c"))))
})

test_that("estimates by group", {
  x <- c(rep("yes", 3000), rep("no", 1000), rep("yes", 1000), rep("no", 3000))
  region <- factor(rep(c("south", "north"), each = 4000), levels = c("south", "north"))
  r <- ldp_privatize(x, "randomized-response", epsilon = 2, categories = c("yes", "no"), seed = 3)
  g <- ldp_estimate(r, by = region)
  expect_s3_class(g, "ldp_estimates")
  expect_equal(names(g), c("south", "north"))
  expect_equal(attr(g$south, "n"), 4000)
  z <- abs(attr(g$south, "unprojected") - c(yes = 0.75, no = 0.25)) / attr(g$south, "stderr")
  expect_true(all(z < 5))
  z <- abs(attr(g$north, "unprojected") - c(yes = 0.25, no = 0.75)) / attr(g$north, "stderr")
  expect_true(all(z < 5))
  table <- as.data.frame(g)
  expect_equal(table$group, rep(c("south", "north"), each = 2))
  expect_error(ldp_estimate(r, by = c("a", "b")), "by has 2 value", class = "ldpest_error")
})

test_that("the sample-size helper agrees with the Python planner's formula", {
  plan <- ldp_plan(d = 10, epsilon = 1, stderr = 0.01, mechanism = "randomized-response")
  e <- exp(1)
  p <- e / (e + 9); q <- 1 / (e + 9)
  worst <- max(sapply(seq(0, 1, by = 1e-4), function(t) { pi <- q + (p - q) * t; pi * (1 - pi) })) / (p - q)^2
  expect_equal(plan$n, ceiling(worst / 0.01^2), tolerance = 1e-3)
  expect_true(all(c("mechanism", "n", "stderr", "auto") %in% names(ldp_plan(d = 4, epsilon = 1, n = 1000))))
})

test_that("ldp_read reads the command line's report and result files", {
  folder <- tempfile()
  dir.create(folder)
  on.exit(unlink(folder, recursive = TRUE))
  python <- Sys.getenv("LDPEST_PYTHON")
  skip_if(!nzchar(python), "LDPEST_PYTHON names the python whose ldpest CLI is used")
  cli <- file.path(dirname(python), "ldpest")
  writeLines(c("answer", rep(c("yes", "no", "no"), 400)), file.path(folder, "answers.csv"))
  for (out in c("reports.csv", "reports.nc", "reports.parquet")) {
    status <- system2(cli, c("privatize", file.path(folder, "answers.csv"), "-c", "answer", "-m",
                             "randomized-response", "-e", "1", "--categories", "yes,no", "-o",
                             file.path(folder, out), "--no-progress"), stdout = FALSE, stderr = FALSE,
                      env = "LD_LIBRARY_PATH=")  # R's library path would load another libpython
    expect_equal(status, 0)
    r <- ldp_read(file.path(folder, out))
    expect_s3_class(r, "ldp_reports")
    expect_equal(length(r$values), 1200)
    expect_equal(r$epsilon, 1)
  }
  for (out in c("result.nc", "result.json")) {
    status <- system2(cli, c("estimate", file.path(folder, "reports.nc"), "-o", file.path(folder, out),
                             "--no-progress"), stdout = FALSE, stderr = FALSE, env = "LD_LIBRARY_PATH=")
    expect_equal(status, 0)
    p <- ldp_read(file.path(folder, out))
    expect_s3_class(p, "ldp_estimate")
    expect_equal(dimnames(p), list(category = c("yes", "no")))
    expect_equal(as.vector(unclass(p)), as.vector(unclass(ldp_estimate(ldp_read(file.path(folder, "reports.nc"))))),
                 tolerance = 1e-12)
  }
  expect_error(ldp_read(file.path(folder, "none.nc")), "no such file", class = "ldpest_error")
})

test_that("vectors cross the bridge as blocks of memory, values intact", {
  r <- .survey()
  expect_true(is.factor(r$values))
  expect_equal(levels(r$values), c("car", "bus", "bike"))
  x <- sample(c("a", "b", "c"), 5000, replace = TRUE)
  collected <- suppressWarnings(ldp_estimate(x, mechanism = "randomized-response", epsilon = 1,
                                             categories = c("c", "b", "a")))
  expect_equal(as.vector(attr(collected, "count")), as.vector(table(factor(x, levels = c("c", "b", "a")))))
  lh <- ldp_privatize(rep(c("a", "b"), 500), "local-hashing", epsilon = 1, categories = c("a", "b"), seed = 2)
  expect_true(is.matrix(lh$values) && is.integer(lh$values))
  expect_true(max(lh$values[, 1]) < 2^31 - 1)
  u <- ldp_privatize(rep(c("a", "b"), 500), "unary-randomized-response", epsilon = 1, categories = c("a", "b"),
                     seed = 3)
  expect_true(all(u$values %in% c(0L, 1L)))
  again <- ldp_estimate(u$values, mechanism = "unary-randomized-response", epsilon = 1, categories = c("a", "b"))
  expect_equal(as.vector(attr(again, "count")), unname(colSums(u$values)))
  s <- ldp_privatize(runif(300), "laplace-series", epsilon = 1, basis = "walsh", k = 4, seed = 4)
  expect_equal(ldp_estimate(s$values, mechanism = "laplace-series", epsilon = 1, basis = "walsh", k = 4)[],
               ldp_estimate(s)[], ignore_attr = TRUE)
})

test_that("codes given as text and groups given as numbers", {
  p <- suppressWarnings(ldp_estimate(c("0", "2", "1", "1"), mechanism = "randomized-response", epsilon = 1,
                                     categories = c("a", "b", "c"), codes = "0-based"))
  expect_equal(as.vector(attr(p, "count")), c(1, 2, 1))
  g <- suppressWarnings(ldp_estimate(c("a", "b", "a", "b"), mechanism = "randomized-response", epsilon = 1,
                                     categories = c("a", "b"), by = c(2, 1, 2, 2)))
  expect_equal(names(g), c("1", "2"))
  expect_equal(unname(sapply(g, function(x) attr(x, "n"))), c(1, 3))
})

test_that("a single number (a mean from the example numeric plugin) prints, summarises and plots", {
  skip_if(Sys.getenv("LDPEST_EXPECT_OUE") != "1", "the test runner did not install the example plugins")
  set.seed(2)
  x <- runif(20000, 0, 10)
  r <- ldp_privatize(x, "one-bit-mean", epsilon = 1, low = 0, high = 10, units = "s", seed = 1)
  m <- ldp_estimate(r)
  expect_null(dim(m))
  expect_equal(length(m), 1)
  expect_equal(attr(m, "estimate_variable"), "mean")
  expect_equal(attr(m, "units"), "s")
  expect_lt(abs(as.vector(m) - mean(x)), 5 * attr(m, "stderr"))
  shown <- paste(capture.output(print(m)), collapse = "\n")
  expect_match(shown, "Clopper-Pearson")
  expect_match(shown, "interval, exact")
  expect_match(shown, "units: s")
  ci <- confint(m, level = 0.9)
  expect_equal(dim(ci), c(1L, 2L))
  expect_equal(rownames(ci), "mean")
  expect_true(ci[1, 1] < as.vector(m) && as.vector(m) < ci[1, 2])
  table <- as.data.frame(m)
  expect_equal(names(table), c("mean", "stderr", "lower", "upper"))
  expect_equal(nrow(table), 1L)
  expect_output(print(summary(m)), "mean")
  png <- tempfile(fileext = ".png")
  grDevices::png(png)
  plot(m)
  grDevices::dev.off()
  expect_gt(file.size(png), 1000)
})

test_that("parameters with reports that carry their spec reach the estimator or are refused", {
  set.seed(3)
  h <- ldp_privatize(runif(2000, 18, 90), "laplace-histogram", epsilon = 1, low = 18, high = 90, bins = 8, seed = 1)
  expect_error(ldp_estimate(h, bins = 16), "bins is a parameter of the mechanism", class = "ldpest_error")
  expect_error(ldp_estimate(h, binz = 16), "has no parameter 'binz'", class = "ldpest_error")
  s <- ldp_privatize(runif(2000), "linf-sampling", epsilon = 1, basis = "walsh", k = 4, seed = 1)
  expect_equal(length(ldp_estimate(s, grid = 50)), 50)
})

test_that("a private mean of bounded numbers: hybrid, duchi and piecewise (the numeric family)", {
  set.seed(4)
  x <- pmin(rgamma(20000, 2, 1 / 40), 500)
  r <- ldp_privatize(x, "hybrid", epsilon = 1, low = 0, high = 500, units = "ms", seed = 1)
  m <- ldp_estimate(r)
  expect_equal(attr(m, "estimate_variable"), "mean")
  expect_equal(attr(m, "units"), "ms")
  expect_lt(abs(as.vector(m) - mean(x)), 5 * attr(m, "stderr"))
  expect_match(paste(capture.output(print(m)), collapse = "\n"), "Student t")
  ci <- confint(m)
  expect_true(ci[1, 1] < as.vector(m) && as.vector(m) < ci[1, 2])
  d <- ldp_estimate(ldp_privatize(x, "duchi", epsilon = 0.5, low = 0, high = 500, seed = 2))
  expect_match(paste(capture.output(print(d)), collapse = "\n"), "Clopper-Pearson")
  expect_error(ldp_privatize(c(1, 600), "piecewise", epsilon = 1, low = 0, high = 500),
               "outside \\[low, high\\]", class = "ldpest_error")
  clipped <- ldp_estimate(ldp_privatize(c(1, 600), "piecewise", epsilon = 1, low = 0, high = 500,
                                        outside = "clip", seed = 3))
  expect_match(attr(clipped, "data_outside_bounds"), "clipped")
})

test_that("quantiles, a CDF and ranges from a hierarchical histogram", {
  set.seed(5)
  x <- pmin(rgamma(50000, 2, 1 / 40), 500)
  r <- ldp_privatize(x, "hierarchical-histogram", epsilon = 2, low = 0, high = 500, bins = 64,
                     units = "ms", seed = 1)
  q <- ldp_estimate(r, estimator = "quantile", levels = c(0.5, 0.9))
  ci <- confint(q)
  truth <- quantile(x, c(0.5, 0.9), names = FALSE)
  expect_true(all(ci[, 1] <= truth + 8 & truth - 8 <= ci[, 2]))  # 8 ms: one leaf
  expect_match(paste(capture.output(print(q)), collapse = "\n"), "test inversion")
  cdf <- as.data.frame(ldp_estimate(r))
  expect_equal(nrow(cdf), 65)
  expect_true(all(diff(cdf$cdf) >= 0))
  g <- ldp_estimate(r, estimator = "range", ranges = list(c(200, 500)))
  expect_lt(abs(as.vector(g) - mean(x >= 200)), 5 * attr(g, "stderr"))
  expect_error(ldp_privatize(x, "hierarchical-histogram", epsilon = 1, low = 0, high = 500, bins = 100),
               "power of branching", class = "ldpest_error")
})

test_that("ldp_plan plans a mean from its range", {
  p <- ldp_plan(low = 0, high = 500, epsilon = 1, stderr = 2)
  expect_equal(p$mechanism[1], "hybrid")
  expect_equal(p$n[1], 67017)
  expect_true(all(p$stderr <= 2))
  expect_error(ldp_plan(low = 0, epsilon = 1, stderr = 2), "both low and high", class = "ldpest_error")
})

test_that("ldp_shuffle_epsilon gives the published shuffle bounds and refuses bad input", {
  generic <- ldp_shuffle_epsilon(4, n = 1e6, delta = 1e-6)
  expect_s3_class(generic, "ldp_shuffle")
  expect_lt(abs(generic$epsilon - 0.0344), 0.03 * 0.0344)
  expect_null(generic$lower)
  rr <- ldp_shuffle_epsilon(4, n = 1e6, delta = 1e-6, mechanism = "randomized-response", categories = 1:100)
  expect_lt(abs(rr$epsilon - 0.0200), 0.03 * 0.0200)
  expect_lte(rr$lower, rr$epsilon)
  expect_true(all(c("bound", "lower", "upper", "note") %in% names(rr$bounds)))
  expect_output(print(rr), "randomized-response")
  expect_error(ldp_shuffle_epsilon(NA, n = 1e6, delta = 1e-6), "epsilon must be one number", class = "ldpest_error")
  expect_error(ldp_shuffle_epsilon(4, n = 1e6, delta = 2), "delta must be in", class = "ldpest_error")
  expect_error(ldp_shuffle_epsilon(4, n = 1.5, delta = 1e-6), "n must be", class = "ldpest_error")
})

test_that("ldp_plan(shuffle =) solves for n or for the local epsilon", {
  p <- ldp_plan(shuffle = 0.1, delta = 1e-6, epsilon = 4)
  expect_equal(p$solved_for, "n")
  expect_lte(p$central_epsilon, 0.1)
  q <- ldp_plan(shuffle = 0.05, delta = 1e-6, n = 1e5, mechanism = "randomized-response", d = 100)
  expect_equal(q$solved_for, "epsilon0")
  expect_lte(q$central_epsilon, 0.05)
  expect_error(ldp_plan(shuffle = 0.1, epsilon = 4), "needs delta", class = "ldpest_error")
})

test_that("ldp_privatize memoises with a state file and charges a ledger, as the CLI does", {
  folder <- tempfile("ledger")
  dir.create(folder)
  state <- file.path(folder, "state.json")
  ledger <- file.path(folder, "ledger.json")
  users <- c("u1", "u2", "u3")
  for (round in 1:4) {
    r <- ldp_privatize(c("a", "b", "c"), "l-grr", epsilon = 1, epsilon_inf = 2.5, categories = c("a", "b", "c"),
                       users = users, state = state, ledger = ledger, budget = 16, at = "2026-12-04", seed = round)
    expect_equal(length(r$values), 3)
  }
  spent <- ldp_ledger(ledger, user = "u1")
  expect_equal(spent$epsilon, 2.5)  # 1 + 1 + 0.5 + 0: memoised reports of one value stop at epsilon_inf
  expect_equal(spent$reports, 4)
  expect_true(any(grepl("ldpest-client-state", readLines(state))))
  expect_warning(r <- ldp_privatize(rep("a", 5), "randomized-response", epsilon = 4, categories = c("a", "b"),
                                    users = c("u1", "u1", "u1", "u1", "u9"), ledger = ledger, budget = 16,
                                    at = "2026-12-04"),
                 "1 user\\(s\\) would exceed the budget of 16 for 2026-12-04: 'u1'", class = "ldpest_warning")
  expect_equal(length(r$values), 1)
  expect_equal(attr(r, "refused"), "u1")
  expect_error(ldp_privatize(c("a", "b"), "randomized-response", epsilon = 1, categories = c("a", "b"),
                             ledger = ledger), "need users", class = "ldpest_error")
  expect_error(ldp_privatize(c("a", "b"), "randomized-response", epsilon = 1, categories = c("a", "b"),
                             users = c("u1", "u2"), state = state), "has none", class = "ldpest_error")
  expect_error(ldp_ledger(NA), "ledger must be one string", class = "ldpest_error")
})

test_that("logical vectors privatise and estimate with categories FALSE, TRUE; bad epsilon and seed are R errors", {
  said <- rep(c(TRUE, FALSE, FALSE), 5000)
  r <- ldp_privatize(said, "randomized-response", epsilon = 2, categories = c(FALSE, TRUE), seed = 2)
  e <- ldp_estimate(r)
  expect_lt(abs(attr(e, "unprojected")[["True"]] - 1 / 3), 5 * attr(e, "stderr")[["True"]])
  expect_warning(collected <- ldp_estimate(c(TRUE, FALSE, TRUE, TRUE), mechanism = "randomized-response",
                                           epsilon = 8, categories = c(FALSE, TRUE)),
                 "uninformative", class = "ldpest_warning")
  expect_equal(names(coef(collected)), c("False", "True"))
  expect_error(ldp_privatize(c("a", "b"), "randomized-response", epsilon = NA, categories = c("a", "b")),
               "epsilon must be one number, got NA", class = "ldpest_error")
  expect_error(ldp_privatize(c("a", "b"), "randomized-response", epsilon = 1, categories = c("a", "b"), seed = "abc"),
               "seed must be one whole number", class = "ldpest_error")
  expect_error(ldp_estimate(r, epsilon = c(1, 2)), "epsilon must be one number", class = "ldpest_error")
})

test_that("print never shows an estimate beside an interval of another without that other", {
  e <- ldp_estimate(ldp_privatize(rep(c("a", "b", "c"), c(500, 300, 2)), "randomized-response", epsilon = 1,
                                  categories = c("a", "b", "c"), seed = 3))
  shown <- capture.output(print(e))
  expect_true(any(grepl("describe the unprojected estimate (its column; the probability is its projection)", shown,
                        fixed = TRUE)))
  header <- shown[grepl("category", shown)]
  expect_true(grepl("probability +unprojected +stderr +lower +upper", header))
  expect_equal(names(as.data.frame(e)), c("category", "probability", "stderr", "lower", "upper"))
  expect_identical(nobs(e), 802L)
})

test_that("1-D histograms plot whole cells with their band, bar charts say what the whiskers are", {
  h <- ldp_estimate(ldp_privatize(runif(4000, 18, 90), "laplace-histogram", epsilon = 1, low = 18, high = 90,
                                  bins = 8, seed = 1))
  b <- ldp_estimate(ldp_privatize(rep(c("yes", "no"), 100), "randomized-response", epsilon = 1,
                                  categories = c("yes", "no"), seed = 1))
  file <- tempfile(fileext = ".png")
  grDevices::png(file)
  plot(h)
  drawn <- graphics::par("usr")
  plot(b)
  region <- rep(c("north", "south", "east"), length.out = 600)
  grouped <- ldp_estimate(ldp_privatize(rep(c("yes", "no"), 300), "randomized-response", epsilon = 1,
                                        categories = c("yes", "no"), seed = 2), by = region)
  expect_identical(plot(grouped), grouped)  # one panel per group (it failed)
  grDevices::dev.off()
  expect_lte(drawn[1], 18)  # the first cell drawn from its left edge (was from its centre, 22.5)
  expect_gte(drawn[2], 90)
  expect_gt(file.size(file), 1000)
})

test_that("ldp_simulate mirrors ldpest simulate, with a plot", {
  s <- ldp_simulate("randomized-response", epsilon = c(1, 2), n = c(1e3, 1e7), categories = c("a", "b", "c"),
                    reps = 5, seed = 1)
  expect_s3_class(s, "data.frame")
  expect_s3_class(s, "ldp_simulation")
  expect_equal(names(s), c("epsilon", "n", "mean_error", "stderr_error"))
  expect_equal(attr(s, "theoretical_slope"), -1)
  for (e in c(1, 2)) expect_lt(s$mean_error[s$epsilon == e & s$n == 1e7], s$mean_error[s$epsilon == e & s$n == 1e3])
  file <- tempfile(fileext = ".png")
  grDevices::png(file)
  expect_identical(plot(s), s)
  grDevices::dev.off()
  expect_error(ldp_simulate("randomized-response", epsilon = NA, n = 1e3, categories = c("a", "b")),
               "epsilon must be numbers", class = "ldpest_error")
  expect_error(ldp_simulate("randomized-response", epsilon = 1, n = 1e3, categories = c("a", "b"), reps = 1),
               "reps must be", class = "ldpest_error")
})
