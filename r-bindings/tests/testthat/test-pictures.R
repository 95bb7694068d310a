# Pictures: base graphics (the default) and ggplot2's autoplot(), each compared with a reviewed SVG
# snapshot (vdiffr, offline), plus the properties the Python CLI's pictures have (issue 27).

.pictures <- local({
  made <- NULL
  function() {
    if (!is.null(made)) return(made)
    ages <- data.frame(age = seq(18, 89, length.out = 3000), income = rep(c(25, 45, 60, 75), 750))
    answers <- factor(rep(c("car", "bus", "bus", "bike"), 750), levels = c("car", "bus", "bike", "plane"))
    made <<- list(
      bars = ldp_estimate(ldp_privatize(data.frame(answer = answers), "randomized-response", epsilon = 1, seed = 1)),
      grouped = ldp_estimate(ldp_privatize(data.frame(answer = answers), "randomized-response", epsilon = 1,
                                           seed = 2), by = rep(c("north", "south", "south"), 1000)),
      cells = ldp_estimate(ldp_privatize(ages["age"], "laplace-histogram", epsilon = 1, low = 18, high = 90,
                                         bins = 8, seed = 3)),
      curve = ldp_estimate(ldp_privatize(seq(0.01, 0.99, length.out = 2000), "linf-sampling", epsilon = 2,
                                         basis = "trigonometric", k = 3, seed = 4)),
      map = ldp_estimate(ldp_privatize(~ age + income, data = ages, "laplace-histogram", epsilon = 2,
                                       low = c(18, 20), high = c(90, 80), bins = c(6, 5), seed = 5)),
      mean = ldp_estimate(ldp_privatize(rep(c(-0.4, 0.6), 1500), "hybrid", epsilon = 1, low = -1, high = 1,
                                        seed = 6)))
    made
  }
})

test_that("base pictures match their reviewed snapshots", {
  for (kind in c("bars", "grouped", "cells", "curve", "map", "mean")) {
    x <- .pictures()[[kind]]
    vdiffr::expect_doppelganger(paste("base", kind), function() plot(x))
  }
  sim <- ldp_simulate("randomized-response", epsilon = c(1, 2), n = c(1e3, 1e5), categories = c("a", "b", "c"),
                      reps = 5, seed = 1)
  vdiffr::expect_doppelganger("base simulation", function() plot(sim))
})

test_that("autoplot() pictures match their reviewed snapshots", {
  for (kind in c("bars", "grouped", "cells", "curve", "map", "mean")) {
    vdiffr::expect_doppelganger(paste("autoplot", kind), ggplot2::autoplot(.pictures()[[kind]]))
  }
  vdiffr::expect_doppelganger("autoplot map stderr", ggplot2::autoplot(.pictures()$map, which = "stderr"))
  sim <- ldp_simulate("randomized-response", epsilon = c(1, 2), n = c(1e3, 1e5), categories = c("a", "b", "c"),
                      reps = 5, seed = 1)
  vdiffr::expect_doppelganger("autoplot simulation", ggplot2::autoplot(sim))
})

test_that("a 2-D picture names its axes after the input's columns and marks exactly the cells whose interval holds 0", {
  map <- .pictures()$map
  p <- ggplot2::autoplot(map)
  expect_equal(c(p$labels$x, p$labels$y), c("age", "income"))
  marks <- p$layers[[2]]$data
  lower <- attr(map, "lower")
  expect_equal(nrow(marks), sum(lower <= 0))
  expect_gt(nrow(marks), 0)
  expect_true(nrow(marks) < length(lower))
  centres <- as.numeric(dimnames(map)$age)
  expect_setequal(paste(marks$.x, marks$.y),
                  paste(centres[which(lower <= 0, arr.ind = TRUE)[, 1]],
                        as.numeric(dimnames(map)$income)[which(lower <= 0, arr.ind = TRUE)[, 2]]))
  expect_match(p$labels$caption, "x: the 95% interval of the unprojected")
})

test_that("histogram cells are drawn whole from edge to edge, and every picture shows its uncertainty", {
  cells <- ggplot2::autoplot(.pictures()$cells)
  built <- ggplot2::layer_data(cells, 1)
  expect_equal(min(built$xmin), 18)
  expect_equal(max(built$xmax), 90)
  expect_equal(nrow(built), 8)
  expect_equal(built$ymin, as.vector(attr(.pictures()$cells, "lower")))
  bars <- ggplot2::layer_data(ggplot2::autoplot(.pictures()$bars), 2)  # the whiskers
  expect_equal(bars$ymin, as.vector(attr(.pictures()$bars, "lower")))
  expect_equal(ggplot2::autoplot(.pictures()$bars)$labels$x, "answer")
  expect_error(ggplot2::autoplot(.pictures()$map, which = "nothing"), "should be one of")
})

test_that("every base picture writes a non-empty PNG", {
  file <- tempfile(fileext = ".png")
  on.exit(unlink(file))
  for (kind in names(.pictures())) {
    grDevices::png(file, width = 900, height = 450)
    expect_identical(plot(.pictures()[[kind]]), .pictures()[[kind]])
    grDevices::dev.off()
    expect_gt(file.size(file), 5000)
  }
})
