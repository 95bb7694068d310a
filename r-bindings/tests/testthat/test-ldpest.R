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
  expect_equal(dimnames(ldp_estimate(r))$category, c("1", "2", "3"))
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
  expect_error(ldp_privatize(c(0.5, NA), "linf-sampling", epsilon = 1, basis = "walsh", k = 2), "data: 1 value(s) are NA",
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
