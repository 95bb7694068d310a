# Design (survey) weights from R: the Hajek frequency estimate of the Python side
# (ldpest/engine/weights.py), by vector or as a column of data with a formula, as lm() takes them.

.survey_weights <- function(n = 3000) {
  data.frame(answer = rep(c("yes", "no", "no"), length.out = n), w = rep(c(1, 2.5, 4), length.out = n),
             region = rep(c("north", "south"), length.out = n), stringsAsFactors = FALSE)
}

test_that("weights by vector and as a formula's column give the same Hajek estimate", {
  df <- .survey_weights()
  r <- ldp_privatize(~ answer, data = df, "randomized-response", epsilon = 1, categories = c("yes", "no"), seed = 3)
  by_vector <- ldp_estimate(r, weights = df$w)
  collected <- data.frame(report = r$values, w = df$w, region = df$region)
  by_column <- ldp_estimate(~ report, data = collected, weights = w, mechanism = "randomized-response", epsilon = 1,
                            categories = c("yes", "no"))
  by_name <- ldp_estimate(~ report, data = collected, weights = "w", mechanism = "randomized-response", epsilon = 1,
                          categories = c("yes", "no"))
  expect_equal(as.vector(attr(by_column, "unprojected")), as.vector(attr(by_vector, "unprojected")))
  expect_equal(as.vector(attr(by_name, "unprojected")), as.vector(attr(by_vector, "unprojected")))
  expect_match(attr(by_vector, "weights"), "^Hajek")
  expect_equal(attr(by_vector, "weight_sum"), sum(df$w))
  # the population share of "yes" is weighted: 1 / (1 + 2.5 + 4) of the weight says yes
  truth <- 1 / 7.5
  expect_lt(abs(attr(by_vector, "unprojected")[["yes"]] - truth), 5 * attr(by_vector, "stderr")[["yes"]])
})

test_that("unit weights change nothing and integer weights are repeated reports", {
  df <- .survey_weights(1200)
  r <- ldp_privatize(df$answer, "randomized-response", epsilon = 1, categories = c("yes", "no"), seed = 4)
  expect_equal(as.vector(attr(ldp_estimate(r, weights = rep(1, 1200)), "unprojected")),
               as.vector(attr(ldp_estimate(r), "unprojected")), tolerance = 1e-12)
  k <- rep(1:3, length.out = 1200)
  repeated <- ldp_estimate(rep(as.character(r$values), k), mechanism = "randomized-response", epsilon = 1,
                           categories = c("yes", "no"))
  expect_equal(as.vector(attr(ldp_estimate(r, weights = k), "unprojected")),
               as.vector(attr(repeated, "unprojected")), tolerance = 1e-12)
})

test_that("groups keep their weights, and bad weights are R errors naming them", {
  df <- .survey_weights()
  r <- ldp_privatize(df$answer, "randomized-response", epsilon = 1, categories = c("yes", "no"), seed = 5)
  collected <- data.frame(report = r$values, w = df$w, region = df$region)
  g <- ldp_estimate(~ report | region, data = collected, weights = w, mechanism = "randomized-response",
                    epsilon = 1, categories = c("yes", "no"))
  north <- collected[collected$region == "north", ]
  alone <- ldp_estimate(north$report, weights = north$w, mechanism = "randomized-response", epsilon = 1,
                        categories = c("yes", "no"))
  expect_equal(as.vector(attr(g$north, "unprojected")), as.vector(attr(alone, "unprojected")))
  expect_error(ldp_estimate(r, weights = -df$w), "finite and >= 0", class = "ldpest_error")
  expect_error(ldp_estimate(r, weights = df$w[-1]), "weights has 2999 value", class = "ldpest_error")
  expect_error(ldp_estimate(~ report, data = collected, weights = nope, mechanism = "randomized-response",
                            epsilon = 1, categories = c("yes", "no")), "'nope' is neither a column",
               class = "ldpest_error")
  with_na <- replace(df$w, 7, NA)
  expect_error(ldp_estimate(r, weights = with_na), "1 record\\(s\\) hold NA \\(first at record 7\\)",
               class = "ldpest_error")
  expect_equal(attr(ldp_estimate(r, weights = with_na, na.rm = TRUE), "n"), 2999)
  expect_error(ldp_estimate(ldp_privatize(df$answer, "hadamard-response", epsilon = 1, categories = c("yes", "no"),
                                          seed = 1), weights = df$w), "no per-report support", class = "ldpest_error")
})
