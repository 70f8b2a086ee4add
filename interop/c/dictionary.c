/* pmix-wire: prints libpmix's attribute dictionary (the exported
 * pmix_dictionary array behind PMIx_Get_attribute_name) as TSV lines
 *   macro name \t string \t data type name
 * pmixw/tests/libpmix_reserved_keys.rs checks pmix_types::keys against it
 * (the entry layout and the list's end: dictionary.h). */
#include <stdio.h>

#include "dictionary.h"

int main(void) {
    for (size_t i = 0; !dict_end(i); i++) {
        printf("%s\t%s\t%s\n", pmix_dictionary[i].name, pmix_dictionary[i].string,
               PMIx_Data_type_string(pmix_dictionary[i].type));
    }
    return 0;
}
