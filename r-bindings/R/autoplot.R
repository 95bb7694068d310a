# ggplot2 pictures (registered when ggplot2 is installed; base graphics stay the default): the
# same content as plot(), uncertainty everywhere, the caption saying what the bands are.

.need_ggplot2 <- function() {
  if (!requireNamespace("ggplot2", quietly = TRUE))
    stop(.condition("autoplot() needs the ggplot2 package (install.packages('ggplot2')); plot() needs nothing",
                    "error"))
}

# aes() from column names (no non-standard evaluation, so no undefined globals).
.aes <- function(...) do.call(ggplot2::aes, lapply(list(...), as.name))

# The table autoplot draws: the shape's table with x, centre and (cells) left/right edges.
.gg_table <- function(shape, group = NULL) {
  t <- shape$table
  names(t)[names(t) == shape$value] <- ".estimate"
  t$.centre <- shape$centre
  if (shape$kind %in% c("cells", "curve")) t$.x <- shape$at
  if (shape$kind == "points") t$.x <- factor(if (is.null(shape$at)) shape$value else as.character(shape$at),
                                             levels = unique(if (is.null(shape$at)) shape$value else
                                               as.character(shape$at)))
  if (shape$kind == "cells") {
    edges <- .cell_edges(shape$at)
    t$.left <- edges[-length(edges)]
    t$.right <- edges[-1]
  }
  if (!is.null(group)) t$.group <- group
  t
}

# The layers of one kind of picture over table t (one panel, or one per .group).
.gg_layers <- function(shape, t) {
  other <- !identical(shape$covers, shape$value)
  layers <- switch(shape$kind,
    points = list(
      if (shape$value == "probability") ggplot2::geom_col(.aes(x = ".x", y = ".estimate"), fill = "#4878a8") else
        ggplot2::geom_point(.aes(x = ".x", y = ".estimate"), shape = 15, colour = "#4878a8", size = 2.5),
      ggplot2::geom_errorbar(.aes(x = ".x", ymin = "lower", ymax = "upper"), width = 0.2),
      ggplot2::geom_point(.aes(x = ".x", y = ".centre"), size = 1.2)),
    cells = {
      last <- if (is.null(t$.group)) t[nrow(t), ] else t[!duplicated(t$.group, fromLast = TRUE), ]
      last$.left <- last$.right
      steps <- rbind(t, last)
      list(ggplot2::geom_rect(.aes(xmin = ".left", xmax = ".right", ymin = "lower", ymax = "upper"), fill = "grey85"),
           ggplot2::geom_step(.aes(x = ".left", y = ".estimate"), data = steps, colour = "#4878a8", linewidth = 1),
           if (other) ggplot2::geom_step(.aes(x = ".left", y = ".centre"), data = steps, linetype = 2))
    },
    curve = list(ggplot2::geom_ribbon(.aes(x = ".x", ymin = "lower", ymax = "upper"), fill = "grey85"),
                 ggplot2::geom_line(.aes(x = ".x", y = ".estimate"), colour = "#4878a8", linewidth = 1),
                 if (other) ggplot2::geom_line(.aes(x = ".x", y = ".centre"), linetype = 2)))
  caption <- switch(shape$kind,
    points = sprintf("%s: %s; points and whiskers: %s, %s", if (shape$value == "probability") "bars" else "squares",
                     shape$drawn, shape$covers, shape$interval),
    sprintf("line: %s%s; band: %s", shape$drawn, if (other) sprintf("; dashed: %s", shape$covers) else "",
            shape$interval))
  c(Filter(Negate(is.null), layers), list(ggplot2::labs(x = shape$axis, y = .ylab(shape), caption = .wrap(caption)),
                                         .caption_left()))
}

.wrap <- function(text) paste(strwrap(text, width = 100), collapse = "\n")

.caption_left <- function() ggplot2::theme(plot.caption = ggplot2::element_text(hjust = 0))

.gg_title <- function(x) sprintf("%s, epsilon = %g, n = %d", attr(x, "mechanism"), attr(x, "epsilon"),
                                 as.integer(attr(x, "n")))

#' A ggplot2 picture of an estimate
#'
#' @param object an "ldp_estimate" or "ldp_estimates" (one panel per group).
#' @param which for a 2-D estimate: "estimate" (a heat map; cells whose interval contains 0 marked
#'   with an x) or "stderr" (the standard error of each cell).
#' @return a ggplot object.
autoplot.ldp_estimate <- function(object, which = c("estimate", "stderr"), ...) {
  .need_ggplot2()
  which <- match.arg(which)
  shape <- .plot_shape(object)
  if (shape$kind == "map") return(.gg_map(object, shape, which))
  t <- .gg_table(shape)
  ggplot2::ggplot(t) + .gg_layers(shape, t) + ggplot2::ggtitle(shape$value, .gg_title(object))
}

autoplot.ldp_estimates <- function(object, ...) {
  .need_ggplot2()
  shapes <- lapply(object, .plot_shape)
  if (any(vapply(shapes, function(s) s$kind == "map", TRUE)))
    stop(.condition("autoplot() of grouped 2-D estimates: plot each group, e.g. autoplot(x[['north']])", "error"))
  panels <- sprintf("%s (n = %d)", names(object), vapply(object, function(e) as.integer(attr(e, "n")), 1L))
  t <- do.call(rbind, Map(.gg_table, shapes, panels))
  t$.group <- factor(t$.group, levels = panels)
  first <- object[[1]]
  ggplot2::ggplot(t) + .gg_layers(shapes[[1]], t) + ggplot2::facet_wrap(".group") +
    ggplot2::ggtitle(shapes[[1]]$value, sprintf("%s, epsilon = %g, by group", attr(first, "mechanism"),
                                                attr(first, "epsilon")))
}

.gg_map <- function(x, shape, which) {
  dn <- dimnames(x)
  cells <- !is.null(attr(x, "cell_volume"))
  ax <- .map_axis(dn[[1]], cells)
  ay <- .map_axis(dn[[2]], cells)
  grid <- expand.grid(.x = ax$centres, .y = ay$centres)
  grid$.value <- as.vector(if (which == "estimate") unclass(x) else attr(x, "stderr"))
  grid$.zero <- as.vector(attr(x, "lower")) <= 0
  width <- function(a) if (length(a$centres) > 1) min(diff(a$centres)) else 1
  p <- ggplot2::ggplot(grid) +
    ggplot2::geom_tile(.aes(x = ".x", y = ".y", fill = ".value"), width = width(ax), height = width(ay)) +
    ggplot2::scale_fill_viridis_c(name = if (which == "estimate") .ylab(shape) else
      sprintf("standard error\n(of the %s)", shape$covers), option = if (which == "estimate") "D" else "B") +
    ggplot2::labs(x = names(dn)[1], y = names(dn)[2]) +
    ggplot2::ggtitle(if (which == "estimate") shape$value else "standard error of each cell", .gg_title(x))
  if (!is.null(ax$labels)) p <- p + ggplot2::scale_x_continuous(breaks = ax$centres, labels = ax$labels)
  if (!is.null(ay$labels)) p <- p + ggplot2::scale_y_continuous(breaks = ay$centres, labels = ay$labels)
  if (which == "estimate" && any(grid$.zero))
    p <- p + ggplot2::geom_point(.aes(x = ".x", y = ".y"), data = grid[grid$.zero, ], shape = 4, colour = "white") +
      ggplot2::labs(caption = .wrap(sprintf("x: the %s contains 0", shape$interval))) + .caption_left()
  p
}

autoplot.ldp_simulation <- function(object, ...) {
  .need_ggplot2()
  t <- data.frame(epsilon = object$epsilon, n = object$n, mean_error = object$mean_error,
                  stderr_error = object$stderr_error)
  t$.epsilon <- factor(sprintf("%g", t$epsilon), levels = sprintf("%g", sort(unique(t$epsilon))))
  t$.low <- pmax(t$mean_error - 2 * t$stderr_error, min(t$mean_error[t$mean_error > 0]) / 10)
  t$.high <- t$mean_error + 2 * t$stderr_error
  ggplot2::ggplot(t, .aes(x = "n", y = "mean_error", colour = ".epsilon")) +
    ggplot2::geom_line() + ggplot2::geom_pointrange(.aes(ymin = ".low", ymax = ".high")) +
    ggplot2::scale_x_log10() + ggplot2::scale_y_log10() +
    ggplot2::labs(x = "n (reports)", y = attr(object, "metric"), colour = "epsilon",
                  caption = "whiskers: +- 2 standard errors of the mean error") +
    ggplot2::ggtitle(sprintf("%s (%s)", attr(object, "mechanism"), attr(object, "simulation")))
}
