/* The status table's name and text lookups (include/weft/status.h). */
#include "weft/status.h"

const char *weft_status_name(weft_status_t s)
{
    switch (s) {
#define WEFT_STATUS_NAME_(name, value, text) \
    case name: return #name;
        WEFT_STATUS_TABLE(WEFT_STATUS_NAME_)
#undef WEFT_STATUS_NAME_
    }
    return "WEFT_UNKNOWN";
}

const char *weft_status_str(weft_status_t s)
{
    switch (s) {
#define WEFT_STATUS_STR_(name, value, text) \
    case name: return text;
        WEFT_STATUS_TABLE(WEFT_STATUS_STR_)
#undef WEFT_STATUS_STR_
    }
    return "unknown status";
}
