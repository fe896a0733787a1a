/*
 * The floor for `calwatch scan`: parse the benchmark file with libical and iterate the same rules over the
 * same window, doing nothing else (no zone conversion, no output). calwatch cannot be faster than this
 * without replacing libical, so BENCHMARKS.md reports calwatch's time as a multiple of it.
 *
 *   cc -O2 benchmarks/floor.c $(pkg-config --cflags --libs libical) -o floor && ./floor FILE FROM TO
 *   (FROM and TO as 20240601T000000)
 */
#include <libical/ical.h>
#include <stdio.h>
#include <stdlib.h>

static char *read_all(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) { perror(path); exit(74); }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    if (fread(text, 1, (size_t)size, file) != (size_t)size) { perror(path); exit(74); }
    text[size] = 0;
    fclose(file);
    return text;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: floor FILE FROM TO\n"); return 64; }
    icalerror_set_errors_are_fatal(0);
    char *text = read_all(argv[1]);
    struct icaltimetype from = icaltime_from_string(argv[2]);
    struct icaltimetype to = icaltime_from_string(argv[3]);
    icalcomponent *root = icalparser_parse_string(text);
    long count = 0;
    for (icalcomponent *event = icalcomponent_get_first_component(root, ICAL_VEVENT_COMPONENT); event;
         event = icalcomponent_get_next_component(root, ICAL_VEVENT_COMPONENT)) {
        icalproperty *start_property = icalcomponent_get_first_property(event, ICAL_DTSTART_PROPERTY);
        if (!start_property) continue;
        struct icaltimetype start = icalproperty_get_dtstart(start_property);
        icalproperty *rule = icalcomponent_get_first_property(event, ICAL_RRULE_PROPERTY);
        if (!rule) {
            if (icaltime_compare(start, from) >= 0 && icaltime_compare(start, to) < 0) count++;
            continue;
        }
        icalrecur_iterator *iterator = icalrecur_iterator_new(icalproperty_get_rrule(rule), start);
        for (struct icaltimetype next = icalrecur_iterator_next(iterator); !icaltime_is_null_time(next);
             next = icalrecur_iterator_next(iterator)) {
            if (icaltime_compare(next, to) >= 0) break;
            if (icaltime_compare(next, from) >= 0) count++;
        }
        icalrecur_iterator_free(iterator);
    }
    printf("%ld\n", count);
    icalcomponent_free(root);
    free(text);
    return 0;
}
