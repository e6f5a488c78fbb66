/* checks.h - the table of op checks, generated from checklist.h. */
#ifndef PG_CHECKASM_CHECKS_H
#define PG_CHECKASM_CHECKS_H

typedef struct checkasm_check_entry {
    const char *name;
    void (*fn)(void);
} checkasm_check_entry;

extern const checkasm_check_entry checkasm_checks[];
extern const int checkasm_n_checks;

#endif
