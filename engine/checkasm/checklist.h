/* checklist.h - one CHECK(op) line per op with a check_<op>.c file.
 * Included twice by checks.c (to declare and to list); no include guard. */
CHECK(vadd)
CHECK(gemv)
CHECK(vmul)
CHECK(sgemm)
