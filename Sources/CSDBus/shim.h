#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

/* sd-bus's method calls are variadic, which Swift cannot call: these wrap the Desktop Notifications
 * Specification's calls (org.freedesktop.Notifications) and the XDG Desktop Portal's OpenURI in fixed signatures.
 * Each returns 0 or a negative errno, with sd-bus's message for it in *message (free it) when there is one. */

#define CW_DEST "org.freedesktop.Notifications"
#define CW_PATH "/org/freedesktop/Notifications"

static inline void cw_take_error(sd_bus_error *error, char **message) {
    if (message && sd_bus_error_is_set(error)) {
        size_t size = strlen(error->name) + (error->message ? strlen(error->message) : 0) + 3;
        *message = malloc(size);
        if (*message) {
            strcpy(*message, error->name);
            if (error->message) {
                strcat(*message, ": ");
                strcat(*message, error->message);
            }
        }
    }
    sd_bus_error_free(error);
}

/* The bus at `address`, or the user's session bus ($DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus). */
static inline int cw_bus_open(const char *address, sd_bus **out) {
    if (!address) return sd_bus_open_user(out);
    sd_bus *bus = NULL;
    int r = sd_bus_new(&bus);
    if (r < 0) return r;
    r = sd_bus_set_address(bus, address);
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
    if (r < 0) {
        sd_bus_unref(bus);
        return r;
    }
    *out = bus;
    return 0;
}

/* Notify(app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout) -> id. Hints: urgency
 * (always), category and desktop-entry when given, value (0-100) when >= 0, x-dunst-stack-tag and
 * x-canonical-private-synchronous when stack is given, resident when set. */
static inline int cw_notify(sd_bus *bus, const char *app, uint32_t replaces, const char *icon, const char *summary,
                            const char *body, const char *const *actions, size_t actionCount, uint8_t urgency,
                            const char *category, const char *desktopEntry, int32_t value, const char *stack,
                            int resident, int32_t timeout, uint32_t *id, char **message) {
    sd_bus_message *m = NULL, *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_message_new_method_call(bus, &m, CW_DEST, CW_PATH, CW_DEST, "Notify");
    if (r < 0) return r;
    r = sd_bus_message_append(m, "susss", app, replaces, icon, summary, body);
    if (r >= 0) r = sd_bus_message_open_container(m, 'a', "s");
    for (size_t i = 0; r >= 0 && i < actionCount; i++) r = sd_bus_message_append_basic(m, 's', actions[i]);
    if (r >= 0) r = sd_bus_message_close_container(m);
    if (r >= 0) r = sd_bus_message_open_container(m, 'a', "{sv}");
    if (r >= 0) r = sd_bus_message_append(m, "{sv}", "urgency", "y", urgency);
    if (r >= 0 && category) r = sd_bus_message_append(m, "{sv}", "category", "s", category);
    if (r >= 0 && desktopEntry) r = sd_bus_message_append(m, "{sv}", "desktop-entry", "s", desktopEntry);
    if (r >= 0 && value >= 0) r = sd_bus_message_append(m, "{sv}", "value", "i", value);
    if (r >= 0 && stack) r = sd_bus_message_append(m, "{sv}", "x-dunst-stack-tag", "s", stack);
    if (r >= 0 && stack) r = sd_bus_message_append(m, "{sv}", "x-canonical-private-synchronous", "s", stack);
    if (r >= 0 && resident) r = sd_bus_message_append(m, "{sv}", "resident", "b", 1);
    if (r >= 0) r = sd_bus_message_close_container(m);
    if (r >= 0) r = sd_bus_message_append_basic(m, 'i', &timeout);
    if (r >= 0) r = sd_bus_call(bus, m, 5 * 1000000ULL, &error, &reply);
    if (r >= 0) r = sd_bus_message_read_basic(reply, 'u', id);
    cw_take_error(&error, message);
    sd_bus_message_unref(m);
    sd_bus_message_unref(reply);
    return r;
}

/* CloseNotification(id). */
static inline int cw_close(sd_bus *bus, uint32_t id, char **message) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_call_method(bus, CW_DEST, CW_PATH, CW_DEST, "CloseNotification", &error, NULL, "u", id);
    cw_take_error(&error, message);
    return r;
}

/* GetCapabilities() -> as, a NULL-terminated list to free with cw_free_strv. */
static inline int cw_capabilities(sd_bus *bus, char ***out, char **message) {
    sd_bus_message *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_call_method(bus, CW_DEST, CW_PATH, CW_DEST, "GetCapabilities", &error, &reply, "");
    if (r >= 0) r = sd_bus_message_read_strv(reply, out);
    cw_take_error(&error, message);
    sd_bus_message_unref(reply);
    return r;
}

static inline void cw_free_strv(char **list) {
    if (!list) return;
    for (char **item = list; *item; item++) free(*item);
    free(list);
}

/* GetServerInformation() -> name, vendor, version, spec_version, each to free. */
static inline int cw_server_information(sd_bus *bus, char **name, char **vendor, char **version, char **spec,
                                        char **message) {
    sd_bus_message *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    const char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    int r = sd_bus_call_method(bus, CW_DEST, CW_PATH, CW_DEST, "GetServerInformation", &error, &reply, "");
    if (r >= 0) r = sd_bus_message_read(reply, "ssss", &a, &b, &c, &d);
    if (r >= 0) {
        *name = strdup(a);
        *vendor = strdup(b);
        *version = strdup(c);
        *spec = strdup(d);
    }
    cw_take_error(&error, message);
    sd_bus_message_unref(reply);
    return r;
}

/* The portal's OpenURI(parent_window, uri, options) with the activation token, when there is one. */
static inline int cw_portal_open_uri(sd_bus *bus, const char *uri, const char *token, char **message) {
    sd_bus_message *m = NULL, *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                                           "org.freedesktop.portal.OpenURI", "OpenURI");
    if (r < 0) return r;
    r = sd_bus_message_append(m, "ss", "", uri);
    if (r >= 0) r = sd_bus_message_open_container(m, 'a', "{sv}");
    if (r >= 0 && token) r = sd_bus_message_append(m, "{sv}", "activation_token", "s", token);
    if (r >= 0) r = sd_bus_message_close_container(m);
    if (r >= 0) r = sd_bus_call(bus, m, 5 * 1000000ULL, &error, &reply);
    cw_take_error(&error, message);
    sd_bus_message_unref(m);
    sd_bus_message_unref(reply);
    return r;
}

/* One signal of the notification server, as cw_next_signal reads it: ActionInvoked (id, action key),
 * ActivationToken (id, token) or NotificationClosed (id, reason). */
typedef struct {
    int kind; /* 1 ActionInvoked, 2 ActivationToken, 3 NotificationClosed */
    uint32_t id;
    uint32_t reason;
    char *text;   /* to free */
    char *sender; /* the sending connection's unique name, to free */
} cw_signal;

/* Subscribes to the server's signals; they are then read by cw_next_signal. */
static inline int cw_subscribe(sd_bus *bus) {
    return sd_bus_add_match(bus, NULL,
                            "type='signal',sender='org.freedesktop.Notifications',"
                            "interface='org.freedesktop.Notifications',path='/org/freedesktop/Notifications'",
                            NULL, NULL);
}

/* The unique name (":1.42") that owns org.freedesktop.Notifications now, to free; signals from any other
 * connection are not the server's (any program on the bus can send one). */
static inline int cw_server_owner(sd_bus *bus, char **owner) {
    sd_bus_message *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    const char *name = NULL;
    int r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetNameOwner", &error, &reply, "s", CW_DEST);
    if (r >= 0) r = sd_bus_message_read(reply, "s", &name);
    if (r >= 0) *owner = strdup(name);
    sd_bus_error_free(&error);
    sd_bus_message_unref(reply);
    return r;
}

/* Processes what the bus has: 1 with *out filled when a server signal came, 0 when nothing is left, < 0 on error
 * (the bus closed: a logout). */
static inline int cw_next_signal(sd_bus *bus, cw_signal *out) {
    for (;;) {
        sd_bus_message *m = NULL;
        int r = sd_bus_process(bus, &m);
        if (r < 0) return r;
        if (r == 0) return 0;
        if (!m) continue;
        int kind = 0;
        if (sd_bus_message_is_signal(m, CW_DEST, "ActionInvoked")) kind = 1;
        else if (sd_bus_message_is_signal(m, CW_DEST, "ActivationToken")) kind = 2;
        else if (sd_bus_message_is_signal(m, CW_DEST, "NotificationClosed")) kind = 3;
        if (kind == 0) {
            sd_bus_message_unref(m);
            continue;
        }
        const char *text = NULL;
        const char *sender = sd_bus_message_get_sender(m);
        out->kind = kind;
        out->text = NULL;
        out->sender = sender ? strdup(sender) : NULL;
        out->reason = 0;
        r = kind == 3 ? sd_bus_message_read(m, "uu", &out->id, &out->reason)
                      : sd_bus_message_read(m, "us", &out->id, &text);
        if (r >= 0 && text) out->text = strdup(text);
        sd_bus_message_unref(m);
        if (r >= 0) return 1;
    }
}
