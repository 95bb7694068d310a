# What R users pass: formulas with data =, one-column data.frames and tibbles, unused factor
# levels, NA, and vectors of ldp_plan arguments (issue 27).

.people <- function(n = 3000) {
  data.frame(answer = rep(c("car", "bus", "bus", "bike"), length.out = n),
             region = rep(c("north", "south", "east"), length.out = n),
             age = seq(18, 89, length.out = n), income = rep(c(20, 50, 80), length.out = n),
             stringsAsFactors = FALSE)
}

test_that("ldp_privatize(~ answer, data =) is ldp_privatize(df$answer), its variable naming the result's dim", {
  df <- .people()
  by_formula <- ldp_privatize(~ answer, data = df, "randomized-response", epsilon = 1,
                              categories = c("car", "bus", "bike"), seed = 4)
  by_vector <- ldp_privatize(df$answer, "randomized-response", epsilon = 1, categories = c("car", "bus", "bike"),
                             seed = 4)
  expect_identical(as.character(by_formula$values), as.character(by_vector$values))
  expect_equal(by_formula$variable, "answer")
  expect_match(capture.output(print(by_formula)), "3000 reports of 'answer'")
  p <- ldp_estimate(by_formula)
  expect_equal(names(dimnames(p)), "answer")
  expect_equal(names(dimnames(attr(p, "stderr"))), "answer")  # every labelled attribute, not only the values
  expect_equal(names(as.data.frame(p))[1], "answer")
  expect_equal(as.vector(unclass(p)), as.vector(unclass(ldp_estimate(by_vector))))
})

test_that("ldp_estimate(~ answer | region, data =) is ldp_estimate(answer, by = region) on collected reports", {
  df <- .people()
  r <- ldp_privatize(~ answer, data = df, "randomized-response", epsilon = 2, categories = c("car", "bus", "bike"),
                     seed = 5)
  collected <- data.frame(report = as.character(r$values), region = df$region)
  g <- ldp_estimate(~ report | region, data = collected, mechanism = "randomized-response", epsilon = 2,
                    categories = c("car", "bus", "bike"))
  expect_s3_class(g, "ldp_estimates")
  expect_equal(sort(names(g)), c("east", "north", "south"))
  same <- ldp_estimate(collected$report, mechanism = "randomized-response", epsilon = 2,
                       categories = c("car", "bus", "bike"), by = collected$region)
  for (group in names(g)) {
    expect_equal(as.vector(unclass(g[[group]])), as.vector(unclass(same[[group]])))
    expect_equal(names(dimnames(g[[group]])), "report")
    expect_equal(attr(g[[group]], "n"), 1000)
  }
  whole <- ldp_estimate(~ report, data = collected, mechanism = "randomized-response", epsilon = 2,
                        categories = c("car", "bus", "bike"))
  truth <- c(car = 0.25, bus = 0.5, bike = 0.25)
  expect_true(all(abs(attr(whole, "unprojected") - truth) < 5 * attr(whole, "stderr")))
})

test_that("~ age + income privatises a 2-D histogram whose dims are the formula's columns", {
  df <- .people()
  h <- ldp_estimate(ldp_privatize(~ age + income, data = df, "laplace-histogram", epsilon = 1, low = c(18, 0),
                                  high = c(90, 100), bins = c(3, 2), seed = 2))
  expect_equal(names(dimnames(h)), c("age", "income"))
})

test_that("formula mistakes are one clear R error each", {
  df <- .people()
  expect_error(ldp_privatize(~ answr, data = df, "randomized-response", epsilon = 1, categories = c("a")),
               "the formula names 'answr', which is not a column of data (the columns of data are: answer, region",
               fixed = TRUE, class = "ldpest_error")
  expect_error(ldp_privatize(answer ~ region, data = df, "randomized-response", epsilon = 1),
               "the formula must be one-sided", class = "ldpest_error")
  expect_error(ldp_privatize(~ answer | region, data = df, "randomized-response", epsilon = 1),
               "ldp_privatize takes no groups", class = "ldpest_error")
  expect_error(ldp_privatize(df$answer, data = df, "randomized-response", epsilon = 1),
               "data = goes with a formula", class = "ldpest_error")
  expect_error(ldp_estimate(~ answer | region, data = df, mechanism = "randomized-response", epsilon = 1,
                            categories = c("car", "bus", "bike"), by = df$region),
               "groups are given twice", class = "ldpest_error")
  expect_error(ldp_privatize(~ answer, data = "df", "randomized-response", epsilon = 1),
               "data must be a data.frame", class = "ldpest_error")
})

test_that("a one-column data.frame or tibble of a factor is that factor; several columns of labels are refused", {
  levels <- c("low", "mid", "high")
  f <- factor(rep(c("mid", "low", "high", "mid"), 500), levels = levels)
  as_factor <- ldp_privatize(f, "randomized-response", epsilon = 1, seed = 9)
  as_frame <- ldp_privatize(data.frame(level = f), "randomized-response", epsilon = 1, seed = 9)
  as_tibble <- ldp_privatize(tibble::tibble(level = f), "randomized-response", epsilon = 1, seed = 9)
  expect_identical(as.character(as_frame$values), as.character(as_factor$values))
  expect_identical(as.character(as_tibble$values), as.character(as_factor$values))
  p <- ldp_estimate(as_tibble)
  expect_equal(dimnames(p), list(level = levels))  # the levels, in their order, named after the column
  e <- ldp_estimate(tibble::tibble(report = as_factor$values), mechanism = "randomized-response", epsilon = 1)
  expect_equal(as.vector(unclass(e)), as.vector(unclass(ldp_estimate(as_factor))))
  h <- ldp_estimate(ldp_privatize(tibble::tibble(age = seq(18, 89, length.out = 500)), "laplace-histogram",
                                  epsilon = 1, low = 18, high = 90, bins = 4, seed = 1))
  expect_equal(names(dimnames(h)), "age")
  expect_error(ldp_privatize(data.frame(a = c("x", "y"), b = c("u", "v")), "randomized-response", epsilon = 1),
               "a data.frame of 2 columns must hold numbers.*column 'a' holds character.*~ a",
               class = "ldpest_error")
})

test_that("unused factor levels are categories the estimate reports (near 0)", {
  f <- factor(rep(c("yes", "no"), 2000), levels = c("yes", "no", "unsure"))
  p <- ldp_estimate(ldp_privatize(f, "randomized-response", epsilon = 2, seed = 3))
  expect_equal(dimnames(p)[[1]], c("yes", "no", "unsure"))
  expect_lt(abs(attr(p, "unprojected")[["unsure"]]), 5 * attr(p, "stderr")[["unsure"]])
  expect_lt(abs(attr(p, "unprojected")[["yes"]] - 0.5), 5 * attr(p, "stderr")[["yes"]])
})

test_that("NA is refused by default, naming the record, and dropped with na.rm = TRUE", {
  x <- c("a", NA, "b", "a", NA)
  expect_error(ldp_privatize(x, "randomized-response", epsilon = 1, categories = c("a", "b")),
               "data: 2 record(s) hold NA (first at record 2); give na.rm = TRUE to drop them", fixed = TRUE,
               class = "ldpest_error")
  r <- ldp_privatize(x, "randomized-response", epsilon = 1, categories = c("a", "b"), na.rm = TRUE, seed = 1)
  expect_equal(length(r$values), 3)
  expect_equal(r$na_removed, 2)
  expect_match(capture.output(print(r)), "2 record\\(s\\) holding NA removed")
  frame <- data.frame(age = c(20, NA, 40, 60), income = c(1, 2, NA, 4))
  expect_error(ldp_privatize(frame, "laplace-histogram", epsilon = 1, low = c(18, 0), high = c(90, 5), bins = 2),
               "2 record(s) hold NA (first at record 2)", fixed = TRUE, class = "ldpest_error")
  collected <- c(rep(c("a", "b"), 50), NA)
  region <- c(rep(c("n", "s"), each = 50), "n")
  expect_error(ldp_estimate(collected, mechanism = "randomized-response", epsilon = 8, categories = c("a", "b")),
               "reports: 1 record(s) hold NA (first at record 101)", fixed = TRUE, class = "ldpest_error")
  region[1] <- NA
  g <- ldp_estimate(collected, mechanism = "randomized-response", epsilon = 8, categories = c("a", "b"), by = region,
                    na.rm = TRUE)
  expect_equal(attr(g[["n"]], "n") + attr(g[["s"]], "n"), 99)  # the NA report and the report of the NA group
  e <- ldp_estimate(collected, mechanism = "randomized-response", epsilon = 1, categories = c("a", "b"),
                    na.rm = TRUE)
  expect_equal(attr(e, "n"), 100)
  expect_equal(attr(e, "na_removed"), 1)
  expect_true(any(grepl("1 report(s) holding NA removed", capture.output(print(e)), fixed = TRUE)))
})

test_that("ldp_plan is vectorised over every argument and refuses what is not a count", {
  many <- ldp_plan(d = 10, epsilon = c(0.5, 1, 2), n = 1000, mechanism = "randomized-response")
  expect_equal(nrow(many), 3)
  expect_equal(many$epsilon, c(0.5, 1, 2))
  for (i in 1:3) {
    one <- ldp_plan(d = 10, epsilon = many$epsilon[i], n = 1000, mechanism = "randomized-response")
    expect_equal(many$stderr[i], one$stderr)
  }
  sizes <- ldp_plan(d = c(4, 16), epsilon = 1, stderr = 0.01, mechanism = "hadamard-response")
  expect_equal(sizes$d, c(4, 16))
  expect_true(sizes$n[2] >= sizes$n[1])
  all <- ldp_plan(d = 10, epsilon = c(1, 2), n = 1000)
  expect_equal(sort(unique(all$epsilon)), c(1, 2))
  expect_error(ldp_plan(d = 10.5, epsilon = 1, n = 1000), "d must be whole numbers, got 10.5",
               class = "ldpest_error")
  expect_error(ldp_plan(d = 10, epsilon = 1, n = 99.5), "n must be whole numbers", class = "ldpest_error")
  expect_error(ldp_plan(d = 10, epsilon = c(1, NA), n = 100), "epsilon must be values without NA",
               class = "ldpest_error")
  expect_error(ldp_plan(d = c(2, 3), epsilon = c(1, 2, 3), n = 100),
               "d has 2 values and another argument 3: give each argument one value or 3", class = "ldpest_error")
})
