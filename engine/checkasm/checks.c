/* checks.c - builds the check table from checklist.h. */
#include "checks.h"

#define CHECK(op) void checkasm_check_##op(void);
#include "checklist.h"
#undef CHECK

#define CHECK(op) { #op, checkasm_check_##op },
const checkasm_check_entry checkasm_checks[] = {
#include "checklist.h"
};
#undef CHECK

const int checkasm_n_checks = (int)(sizeof checkasm_checks / sizeof checkasm_checks[0]);
