#include <libsecret/secret.h>
#include <stdlib.h>
#include <string.h>

/* libsecret's calls for one secret per calwatch account, in fixed signatures (its simple API is variadic, which
 * Swift cannot call). The item is found by the schema's name and the account's; none of these ever unlocks a
 * collection or an item, which would ask for a password at a prompt a daemon cannot answer. Each returns < 0 on an
 * error, with its message in *message (free it). */

static const SecretSchema cw_tokens_schema = {
    "org.calwatch.AccountTokens",
    SECRET_SCHEMA_NONE,
    {{"account", SECRET_SCHEMA_ATTRIBUTE_STRING}, {NULL, 0}},
};

static inline int cw_secret_fail(GError *error, char **message) {
    if (message) *message = strdup(error && error->message ? error->message : "unknown error");
    if (error) g_error_free(error);
    return -1;
}

static inline SecretService *cw_secret_service(char **message) {
    GError *error = NULL;
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &error);
    if (!service) cw_secret_fail(error, message);
    return service;
}

/* 1 when the default collection is there and unlocked, 0 when it is locked or there is none, < 0 when the
 * Secret Service cannot be reached. */
static inline int cw_secret_default_unlocked(char **message) {
    SecretService *service = cw_secret_service(message);
    if (!service) return -1;
    GError *error = NULL;
    SecretCollection *collection =
        secret_collection_for_alias_sync(service, SECRET_COLLECTION_DEFAULT, SECRET_COLLECTION_NONE, NULL, &error);
    g_object_unref(service);
    if (error) return cw_secret_fail(error, message);
    if (!collection) return 0;
    int unlocked = !secret_collection_get_locked(collection);
    g_object_unref(collection);
    return unlocked;
}

static inline GHashTable *cw_secret_attributes(const char *account) {
    GHashTable *attributes = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(attributes, (gpointer) "account", (gpointer) account);
    return attributes;
}

/* Stores `secret` for `account` in the default collection, replacing the one there. */
static inline int cw_secret_store(const char *account, const char *label, const char *secret, char **message) {
    GError *error = NULL;
    GHashTable *attributes = cw_secret_attributes(account);
    gboolean stored = secret_password_storev_sync(&cw_tokens_schema, attributes, SECRET_COLLECTION_DEFAULT, label,
                                                  secret, NULL, &error);
    g_hash_table_unref(attributes);
    return stored ? 0 : cw_secret_fail(error, message);
}

/* 1 with *secret set (free it) when found, 0 when there is none, 2 when it is there but locked. */
static inline int cw_secret_lookup(const char *account, char **secret, char **message) {
    SecretService *service = cw_secret_service(message);
    if (!service) return -1;
    GError *error = NULL;
    GHashTable *attributes = cw_secret_attributes(account);
    GList *items = secret_service_search_sync(service, &cw_tokens_schema, attributes, SECRET_SEARCH_LOAD_SECRETS,
                                              NULL, &error);
    g_hash_table_unref(attributes);
    g_object_unref(service);
    if (error) return cw_secret_fail(error, message);
    int result = 0;
    if (items) {
        SecretValue *value = secret_item_get_secret(SECRET_ITEM(items->data));
        const char *text = value ? secret_value_get_text(value) : NULL;
        if (text) {
            *secret = strdup(text);
            result = 1;
        } else {
            result = 2;
        }
        if (value) secret_value_unref(value);
    }
    g_list_free_full(items, g_object_unref);
    return result;
}

/* Removes the unlocked items of `account`: 1 when one was, 0 when there was none, 2 when one is there but locked. */
static inline int cw_secret_clear(const char *account, char **message) {
    SecretService *service = cw_secret_service(message);
    if (!service) return -1;
    GError *error = NULL;
    GHashTable *attributes = cw_secret_attributes(account);
    GList *items =
        secret_service_search_sync(service, &cw_tokens_schema, attributes, SECRET_SEARCH_ALL, NULL, &error);
    g_hash_table_unref(attributes);
    g_object_unref(service);
    if (error) return cw_secret_fail(error, message);
    int result = 0;
    for (GList *item = items; item && result >= 0; item = item->next) {
        if (secret_item_get_locked(SECRET_ITEM(item->data))) {
            result = 2;
        } else if (secret_item_delete_sync(SECRET_ITEM(item->data), NULL, &error)) {
            if (result == 0) result = 1;
        } else {
            result = cw_secret_fail(error, message);
        }
    }
    g_list_free_full(items, g_object_unref);
    return result;
}
