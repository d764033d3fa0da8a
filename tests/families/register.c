/* The test families' templates (the .cu files here, embedded by the Makefile into build/gen/test_templates.c)
 * join the library's before main, so gt_render finds them; the families register themselves. */
#include "family.h"

const char *gt_test_template(const char *name);
const char *gt_test_template_name(int i);

__attribute__((constructor)) static void register_templates(void)
{
    for (int i = 0; gt_test_template_name(i); ++i)
        gt_template_register(gt_test_template_name(i), gt_test_template(gt_test_template_name(i)));
}
