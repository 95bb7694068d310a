# broom's conventions through the generics package: tidy(), glance(), augment() (issue 27).

.votes <- function() {
  x <- factor(rep(c("car", "bus", "bike", "bus"), 1500), levels = c("car", "bus", "bike"))
  ldp_privatize(x, "randomized-response", epsilon = 1, seed = 11)
}

test_that("tidy() has term, estimate, std.error, conf.low, conf.high, and the estimate they describe", {
  p <- ldp_estimate(.votes())
  t <- generics::tidy(p)
  expect_equal(names(t), c("term", "category", "estimate", "unprojected", "std.error", "conf.low", "conf.high"))
  expect_equal(t$term, c("car", "bus", "bike"))
  expect_equal(t$estimate, as.vector(unclass(p)))       # as printed (after the projection)
  expect_equal(t$unprojected, as.vector(attr(p, "unprojected")))  # what the stderr and interval describe
  expect_equal(t$std.error, as.vector(attr(p, "stderr")))
  expect_equal(cbind(t$conf.low, t$conf.high), unname(confint(p)))
  narrower <- generics::tidy(p, conf.level = 0.5)
  expect_equal(cbind(narrower$conf.low, narrower$conf.high), unname(confint(p, level = 0.5)))
  expect_true(all(narrower$conf.high - narrower$conf.low < t$conf.high - t$conf.low))
  expect_false("conf.low" %in% names(generics::tidy(p, conf.int = FALSE)))
  none <- generics::tidy(ldp_estimate(.votes(), projection = "none"))
  expect_equal(names(none), c("term", "category", "estimate", "std.error", "conf.low", "conf.high"))
})

test_that("tidy() of a 2-D histogram names its cells and keeps the dims as numbers", {
  x <- data.frame(age = seq(18, 89, length.out = 2000), income = rep(c(10, 90), 1000))
  h <- ldp_estimate(ldp_privatize(x, "laplace-histogram", epsilon = 1, low = c(18, 0), high = c(90, 100),
                                  bins = c(3, 2), seed = 2))
  t <- generics::tidy(h)
  expect_equal(nrow(t), 6)
  expect_equal(t$term[1:2], c("30:25", "54:25"))
  expect_equal(t$age, rep(c(30, 54, 78), 2))
  expect_equal(t$income, rep(c(25, 75), each = 3))
  expect_equal(t$std.error, as.vector(attr(h, "stderr")))
})

test_that("a single estimate (a mean) tidies to one row named after it", {
  m <- ldp_estimate(ldp_privatize(rep(c(-0.5, 0.5), 2000), "duchi", epsilon = 1, low = -1, high = 1, seed = 1))
  t <- generics::tidy(m)
  expect_equal(nrow(t), 1)
  expect_equal(t$term, "mean")
  expect_equal(t$estimate, as.vector(unclass(m)))
  expect_equal(t$std.error, as.vector(attr(m, "stderr")))
})

test_that("glance() is one row per estimate (per group)", {
  p <- ldp_estimate(.votes())
  g <- generics::glance(p)
  expect_equal(names(g), c("estimator", "mechanism", "epsilon", "nobs", "projection", "conf.level",
                           "interval.method", "na.removed"))
  expect_equal(g$nobs, 6000L)
  expect_equal(g$mechanism, "randomized-response")
  expect_equal(g$conf.level, 0.95)
  grouped <- ldp_estimate(.votes(), by = rep(c("north", "south", "south"), 2000))
  gg <- generics::glance(grouped)
  expect_equal(gg$group, c("north", "south"))
  expect_equal(gg$nobs, c(2000L, 4000L))
  tt <- generics::tidy(grouped)
  expect_equal(names(tt)[1:2], c("group", "term"))
  expect_equal(nrow(tt), 6)
  expect_equal(tt$estimate[tt$group == "south"], as.vector(unclass(grouped[["south"]])))
})

test_that("augment() gives the estimate of the category or cell of each row of newdata", {
  p <- ldp_estimate(.votes())
  a <- generics::augment(p, newdata = data.frame(category = c("bike", "car", "plane"), id = 1:3))
  expect_equal(a$id, 1:3)
  expect_equal(a$.fitted, c(unname(p["bike"]), unname(p["car"]), NA))
  expect_equal(a$.se.fit, c(attr(p, "stderr")[["bike"]], attr(p, "stderr")[["car"]], NA))
  expect_equal(a$.lower[2], attr(p, "lower")[["car"]])
  x <- data.frame(age = seq(18, 89, length.out = 2000), income = rep(c(10, 90), 1000))
  h <- ldp_estimate(ldp_privatize(x, "laplace-histogram", epsilon = 1, low = c(18, 0), high = c(90, 100),
                                  bins = c(3, 2), seed = 2))
  rows <- data.frame(age = c(18, 41.9, 42.1, 90, 17), income = c(0, 99, 10, 100, 50))
  cells <- generics::augment(h, newdata = rows)
  values <- unclass(h)  # [age cell, income cell]
  expect_equal(cells$.fitted, c(values[1, 1], values[1, 2], values[2, 1], values[3, 2], NA))
  expect_equal(cells$.se.fit[3], attr(h, "stderr")[2, 1])
  expect_error(generics::augment(p), "augment\\(\\) needs newdata", class = "ldpest_error")
  expect_error(generics::augment(h, newdata = data.frame(age = 20)), "newdata has no column 'income'",
               class = "ldpest_error")
  s <- ldp_estimate(ldp_privatize(seq(0.01, 0.99, length.out = 500), "linf-sampling", epsilon = 1,
                                  basis = "trigonometric", k = 3, seed = 4))
  expect_error(generics::augment(s, newdata = data.frame(x = 0.5)), "this estimate is a curve", class = "ldpest_error")
})
