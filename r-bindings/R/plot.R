# Pictures in base graphics (the Python CLI's pictures are the reference: uncertainty everywhere,
# whole edge cells, axes named after the input, 2-D cells whose interval contains 0 marked).

#' Plot an estimate with its uncertainty (base graphics)
#'
#' Probabilities are bars with whiskers; a single estimate or quantiles are points with whiskers;
#' a 1-D histogram is drawn constant over each whole cell with its band, a curve with its band;
#' a 2-D estimate is a heat map with a colour key beside its standard errors, with the cells
#' whose interval contains 0 marked. When the intervals describe another estimate than the one
#' drawn (the unprojected one), that one is drawn too, and the legend says which.
plot.ldp_estimate <- function(x, main = NULL, ...) {
  shape <- .plot_shape(x)
  title <- if (is.null(main)) sprintf("%s\n%s, epsilon = %g, n = %d", shape$value, attr(x, "mechanism"),
                                      attr(x, "epsilon"), as.integer(attr(x, "n"))) else main
  switch(shape$kind,
         map = .plot_map(x, shape, title, ...),
         points = .plot_points(shape, title, ...),
         cells = .plot_cells(shape, title, ...),
         curve = .plot_curve(shape, title, ...))
  invisible(x)
}

# What a picture of x needs: its kind, the table, the estimate drawn and the one the intervals describe.
.plot_shape <- function(x) {
  if (length(dim(x)) > 2) stop(.condition(sprintf("cannot plot a %d-dimensional estimate; select a slice first",
                                                  length(dim(x))), "error"))
  table <- .estimate_table(x)
  value <- .estimate_name(x)
  covers <- .interval_estimate(x)
  centre <- if (identical(covers, value) || is.null(attr(x, covers))) table[[value]] else as.vector(attr(x, covers))
  if (identical(centre, table[[value]])) covers <- value
  level <- attr(x, "confidence_level")
  interval <- if (is.null(level)) sprintf("interval of the %s", covers) else
    sprintf("%g%% interval of the %s (%s)", 100 * level, covers, attr(x, "interval_method"))
  projection <- attr(x, "projection")
  drawn <- if (is.null(projection) || identical(projection, "none")) value else
    sprintf("%s (%s projection)", value, projection)
  at <- if (length(dimnames(x)) == 1) table[[1]] else NULL
  kind <- if (length(dim(x)) == 2) "map" else
    if (is.null(at) || !is.numeric(at) || length(at) < 2 || value == "quantile") "points" else
      if (!is.null(attr(x, "cell_volume"))) "cells" else "curve"
  list(kind = kind, table = table, value = value, covers = covers, centre = centre, interval = interval,
       drawn = drawn, units = attr(x, "units"), at = at, axis = if (is.null(at)) "" else names(table)[1])
}

.ylab <- function(shape) {
  if (is.null(shape$units) || identical(shape$units, "1")) shape$value else sprintf("%s [%s]", shape$value, shape$units)
}

# A legend at the top right, shrunk to fit the plot's width (small panels of grouped estimates).
.legend <- function(labels, ...) {
  width <- max(graphics::strwidth(labels, cex = 0.8)) + 4 * graphics::strwidth("M", cex = 0.8)
  usr <- graphics::par("usr")
  graphics::legend("topright", labels, cex = 0.8 * min(1, (usr[2] - usr[1]) / width), bty = "n", ...)
}

# Room above the data for a legend of so many lines.
.headroom <- function(ylim, lines) c(ylim[1], ylim[2] + diff(ylim) * 0.09 * (lines + 1))

# Cell edges from equal-width cell centres (histograms).
.cell_edges <- function(at) {
  width <- if (length(at) > 1) stats::median(diff(at)) else 1
  c(at - width / 2, at[length(at)] + width / 2)
}

# Bars (probabilities) or points (a single estimate, quantiles), whiskers on the estimate the intervals describe.
.plot_points <- function(shape, title, ...) {
  t <- shape$table
  estimate <- t[[shape$value]]
  labels <- if (is.null(shape$at)) shape$value else as.character(shape$at)
  other <- !identical(shape$covers, shape$value)
  ylim <- .headroom(range(c(if (shape$value == "probability") 0, estimate, shape$centre, t$lower, t$upper),
                          finite = TRUE), 2 + other)
  if (shape$value == "probability") {
    at <- graphics::barplot(estimate, names.arg = labels, ylim = ylim, xlab = shape$axis, ylab = .ylab(shape),
                            main = title, col = "#4878a8", border = NA, ...)
  } else {
    at <- seq_along(estimate)
    graphics::plot(at, estimate, xlim = c(0.5, length(at) + 0.5), ylim = ylim, xaxt = "n", pch = 15,
                   col = "#4878a8", xlab = shape$axis, ylab = .ylab(shape), main = title, ...)
    graphics::axis(1, at = at, labels = labels)
  }
  graphics::arrows(at, t$lower, at, t$upper, angle = 90, code = 3, length = 0.05)
  graphics::points(at, shape$centre, pch = 19, cex = 0.7)
  .legend(c(shape$drawn, if (other) shape$covers, sprintf("whiskers: %s", shape$interval)),
          pch = c(15, if (other) 19, NA),
          col = c("#4878a8", if (other) "black", "black"), lty = c(NA, if (other) NA, 1))
}

# A histogram: constant over each whole cell (edge cells included), its band per cell.
.plot_cells <- function(shape, title, ...) {
  t <- shape$table
  edges <- .cell_edges(shape$at)
  left <- edges[-length(edges)]
  right <- edges[-1]
  estimate <- t[[shape$value]]
  other <- !identical(shape$covers, shape$value)
  ylim <- .headroom(range(c(0, t$lower, t$upper, estimate), finite = TRUE), 2 + other)
  graphics::plot(range(edges), ylim, type = "n", xlab = shape$axis, ylab = .ylab(shape), main = title, ...)
  graphics::rect(left, t$lower, right, t$upper, col = "grey85", border = NA)
  stairs <- function(y, ...) {
    graphics::segments(left, y, right, y, ...)
    graphics::segments(right[-length(right)], y[-length(y)], left[-1], y[-1], ...)
  }
  stairs(estimate, lwd = 2, col = "#4878a8")
  if (other) stairs(shape$centre, lty = 2)
  .legend(c(shape$drawn, if (other) shape$covers, shape$interval),
          lwd = c(2, if (other) 1, 8), lty = c(1, if (other) 2, 1),
          col = c("#4878a8", if (other) "black", "grey85"))
}

# A curve (a series density, a CDF) with its band.
.plot_curve <- function(shape, title, ...) {
  t <- shape$table
  at <- shape$at
  estimate <- t[[shape$value]]
  other <- !identical(shape$covers, shape$value)
  ylim <- .headroom(range(c(t$lower, t$upper, estimate), finite = TRUE), 2 + other)
  graphics::plot(at, estimate, type = "n", ylim = ylim, xlab = shape$axis, ylab = .ylab(shape), main = title, ...)
  graphics::polygon(c(at, rev(at)), c(t$lower, rev(t$upper)), col = "grey85", border = NA)
  graphics::lines(at, estimate, lwd = 2, col = "#4878a8")
  if (other) graphics::lines(at, shape$centre, lty = 2)
  .legend(c(shape$drawn, if (other) shape$covers, shape$interval),
          lwd = c(2, if (other) 1, 8), lty = c(1, if (other) 2, 1),
          col = c("#4878a8", if (other) "black", "grey85"))
}

# The positions of a 2-D axis: cell edges for numbers (each cell whole), else 1..k with the labels.
.map_axis <- function(labels, cells) {
  numbers <- suppressWarnings(as.numeric(labels))
  if (!anyNA(numbers) && cells) return(list(edges = .cell_edges(numbers), centres = numbers, labels = NULL))
  if (!anyNA(numbers)) return(list(edges = numbers, centres = numbers, labels = NULL))
  list(edges = seq(0.5, length(labels) + 0.5), centres = seq_along(labels), labels = labels)
}

# A colour key: the colours from the lowest to the highest value, labelled on the right.
.colour_key <- function(breaks, colours, label) {
  graphics::par(mar = c(6, 0.5, 4, 6))
  graphics::image(c(0, 1), breaks, matrix((breaks[-1] + breaks[-length(breaks)]) / 2, nrow = 1), col = colours,
                  breaks = breaks, xaxt = "n", yaxt = "n", xlab = "", ylab = "")
  ticks <- pretty(breaks)
  ticks <- ticks[ticks >= min(breaks) & ticks <= max(breaks)]
  graphics::axis(4, at = ticks, labels = formatC(ticks, format = "g", digits = 3), las = 1, cex.axis = 0.8)
  graphics::mtext(label, side = 4, line = 4.6, cex = 0.8)
}

# Equal-width colour breaks over the finite values (one break more than colours).
.breaks <- function(values, colours) {
  span <- range(values, finite = TRUE)
  if (span[1] == span[2]) span <- span + c(-0.5, 0.5) * max(abs(span[1]), 1e-12)
  seq(span[1], span[2], length.out = length(colours) + 1)
}

# A 2-D estimate: a heat map (first dim on x) with its colour key, beside the standard errors;
# the cells whose interval contains 0 carry an x.
.plot_map <- function(x, shape, title, ...) {
  dn <- dimnames(x)
  cells <- !is.null(attr(x, "cell_volume"))
  ax <- .map_axis(dn[[1]], cells)
  ay <- .map_axis(dn[[2]], cells)
  z <- matrix(unclass(x), nrow = dim(x)[1])
  se <- matrix(attr(x, "stderr"), nrow = dim(x)[1])
  old <- graphics::par(no.readonly = TRUE)
  on.exit({ graphics::layout(1); graphics::par(old[c("mar", "mgp", "cex")]) })
  graphics::layout(matrix(1:4, 1), widths = c(4, 1.6, 4, 1.6))
  draw <- function(values, colours, main) {
    graphics::par(mar = c(6, 4.5, 4, 0.5))
    graphics::image(ax$edges, ay$edges, values, col = colours, breaks = .breaks(values, colours), xlab = names(dn)[1], ylab = names(dn)[2],
                    main = main, xaxt = if (is.null(ax$labels)) "s" else "n",
                    yaxt = if (is.null(ay$labels)) "s" else "n", ...)
    if (!is.null(ax$labels)) graphics::axis(1, at = ax$centres, labels = ax$labels)
    if (!is.null(ay$labels)) graphics::axis(2, at = ay$centres, labels = ay$labels)
  }
  colours <- grDevices::hcl.colors(64, "viridis")
  draw(z, colours, title)
  lower <- attr(x, "lower")
  if (!is.null(lower) && any(lower <= 0)) {
    marked <- which(matrix(lower, nrow = dim(x)[1]) <= 0, arr.ind = TRUE)
    graphics::points(ax$centres[marked[, 1]], ay$centres[marked[, 2]], pch = 4, col = "white", cex = 0.9)
    note <- strwrap(sprintf("x: the %s contains 0", shape$interval), width = 70)
    graphics::mtext(note, side = 1, line = 3.9 + 0.8 * (seq_along(note) - 1), cex = 0.65, adj = 0,
                    at = graphics::par("usr")[1])
  }
  .colour_key(.breaks(z, colours), colours, .ylab(shape))
  errors <- grDevices::hcl.colors(64, "Inferno")
  draw(se, errors, "standard error of each cell")
  .colour_key(.breaks(se, errors), errors, sprintf("standard error (of the %s)", shape$covers))
}

plot.ldp_estimates <- function(x, ...) {
  groups <- names(x)
  if (!any(vapply(x, function(e) length(dim(e)) == 2, TRUE))) {  # a panel per group; 2-D maps: a page per group
    columns <- ceiling(sqrt(length(groups)))
    old <- graphics::par(mfrow = c(ceiling(length(groups) / columns), columns))
    on.exit(graphics::par(old))
  }
  for (group in groups) {
    e <- x[[group]]
    plot(e, main = sprintf("%s\n%s, epsilon = %g, n = %d", group, attr(e, "mechanism"), attr(e, "epsilon"),
                           as.integer(attr(e, "n"))), ...)
  }
  invisible(x)
}

plot.ldp_simulation <- function(x, main = NULL, ...) {
  epsilons <- sort(unique(x$epsilon))
  colours <- grDevices::hcl.colors(max(length(epsilons), 2), "Dark 3")[seq_along(epsilons)]
  low <- pmax(x$mean_error - 2 * x$stderr_error, min(x$mean_error[x$mean_error > 0]) / 10)
  graphics::plot(x$n, x$mean_error, log = "xy", type = "n", ylim = range(c(low, x$mean_error + 2 * x$stderr_error)),
                 xlab = "n (reports)", ylab = attr(x, "metric"),
                 main = if (is.null(main)) sprintf("%s (%s)", attr(x, "mechanism"), attr(x, "simulation")) else main,
                 ...)
  for (i in seq_along(epsilons)) {
    rows <- x[x$epsilon == epsilons[i], ]
    graphics::arrows(rows$n, pmax(rows$mean_error - 2 * rows$stderr_error, min(low)), rows$n,
                     rows$mean_error + 2 * rows$stderr_error, angle = 90, code = 3, length = 0.03, col = colours[i])
    graphics::lines(rows$n, rows$mean_error, type = "b", pch = 19, col = colours[i])
  }
  .legend(c(sprintf("epsilon = %g", epsilons), "whiskers: +- 2 standard errors"),
          col = c(colours, "black"), lty = c(rep(1, length(epsilons)), NA), pch = c(rep(19, length(epsilons)),
          NA))
  invisible(x)
}

