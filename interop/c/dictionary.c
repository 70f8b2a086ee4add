/* pmix-wire: prints libpmix's attribute dictionary (the exported
 * pmix_dictionary array behind PMIx_Get_attribute_name) as TSV lines
 *   macro name \t string \t data type name
 * pmixw/tests/libpmix_reserved_keys.rs checks pmix_types::keys against it. The entry
 * layout is libpmix 4.2.2's pmix_regattr_input_t; the list ends with an
 * entry whose index is UINT32_MAX. */
#include <pmix.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    uint32_t index;
    char *name;
    char *string;
    pmix_data_type_t type;
    char **description;
} dict_entry_t;

extern dict_entry_t pmix_dictionary[];

int main(void) {
    for (size_t i = 0; UINT32_MAX != pmix_dictionary[i].index && NULL != pmix_dictionary[i].name
                       && '\0' != pmix_dictionary[i].name[0]; i++) {
        printf("%s\t%s\t%s\n", pmix_dictionary[i].name, pmix_dictionary[i].string,
               PMIx_Data_type_string(pmix_dictionary[i].type));
    }
    return 0;
}
