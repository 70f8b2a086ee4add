/* pmix-wire: libpmix's attribute dictionary, the exported pmix_dictionary
 * array behind PMIx_Get_attribute_name. Written for pmix-wire. The entry
 * layout is pmix_regattr_input_t of libpmix 4.2.2 and 5.0.11: 4.2.2's list
 * ends with an entry whose index is UINT32_MAX, 5.0.11's has no end entry
 * (its length is a constant of its private headers), and in both every
 * entry's index is its position, so the first entry that breaks either
 * rule ends the list (dict_end). */
#ifndef PMIXW_DICTIONARY_H
#define PMIXW_DICTIONARY_H

#include <pmix.h>
#include <stdint.h>

typedef struct {
    uint32_t index;
    char *name;
    char *string;
    pmix_data_type_t type;
    char **description;
} dict_entry_t;

extern dict_entry_t pmix_dictionary[];

/* entry i is past the list's end */
static inline int dict_end(size_t i) {
    return i != pmix_dictionary[i].index || UINT32_MAX == pmix_dictionary[i].index ||
           NULL == pmix_dictionary[i].name || '\0' == pmix_dictionary[i].name[0];
}

#endif
