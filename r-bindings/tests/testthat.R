library(testthat)
library(ldpest)
test_check("ldpest")
