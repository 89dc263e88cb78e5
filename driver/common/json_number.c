#include "common/json_number.h"

#include <stdio.h>

cJSON *hetc_json_exact_number(double value) {
  char text[40];
  snprintf(text, sizeof(text), "%.17g", value);
  return cJSON_CreateRaw(text);
}

cJSON *hetc_json_exact_numbers(const double *values, int count) {
  cJSON *array = cJSON_CreateArray();
  for (int i = 0; array && i < count; ++i) {
    cJSON *number = hetc_json_exact_number(values[i]);
    if (!number) {
      cJSON_Delete(array);
      return NULL;
    }
    cJSON_AddItemToArray(array, number);
  }
  return array;
}
