#ifndef CALWATCH_CMOSQUITTO_SHIM_H
#define CALWATCH_CMOSQUITTO_SHIM_H

#include <mosquitto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One client and what its network thread (mosquitto_loop_start) tells: whether it is connected, the broker's last
 * CONNACK code, and the message ids of the QoS 1 publishes the broker has acknowledged (PUBACK) since the caller
 * last took them, so a caller can wait for exactly the messages of a batch (a resent message of an earlier batch
 * is acknowledged too, and must not count for this one). */
typedef struct {
    struct mosquitto *mosq;
    pthread_mutex_t lock;
    int *acks;
    size_t ack_count;
    size_t ack_capacity;
    int connected;
    long connections; /* connections accepted so far: a new one is announced again */
    int refused; /* the last CONNACK's code when not 0 (bad credentials, not authorised) */
    char last_error[256]; /* libmosquitto's last error message (a TLS certificate not trusted, say) */
    char *status_topic; /* where `online` is said on every connection and `offline` is the will; NULL: neither */
    int leaving; /* `offline` is being said on purpose: not answered with `online` */
    struct timespec down_since; /* when the last connection was lost (CLOCK_MONOTONIC); zero while never lost */
} cw_mqtt;

/* Says `online`, retained, on the status topic. */
static void cw_mqtt_say_online(struct mosquitto *m, cw_mqtt *c) {
    mosquitto_publish(m, NULL, c->status_topic, 6, "online", 1, true);
}

static void cw_mqtt_on_log(struct mosquitto *m, void *obj, int level, const char *text) {
    (void)m;
    if (level != MOSQ_LOG_ERR || !text) return;
    cw_mqtt *c = obj;
    pthread_mutex_lock(&c->lock);
    strncpy(c->last_error, text, sizeof(c->last_error) - 1);
    c->last_error[sizeof(c->last_error) - 1] = 0;
    pthread_mutex_unlock(&c->lock);
}

/* Copies libmosquitto's last error message into `out` (empty when there was none). */
static inline void cw_mqtt_last_error(cw_mqtt *c, char *out, size_t size) {
    pthread_mutex_lock(&c->lock);
    strncpy(out, c->last_error, size - 1);
    out[size - 1] = 0;
    pthread_mutex_unlock(&c->lock);
}

/* On every connection (the first, and each after a broker restart or a takeover that sent the will): `online`,
 * and a subscription to the status topic, so that an `offline` anyone else retains there is answered at once. */
static void cw_mqtt_on_connect(struct mosquitto *m, void *obj, int rc) {
    cw_mqtt *c = obj;
    pthread_mutex_lock(&c->lock);
    c->connected = rc == 0;
    if (rc == 0) c->connections += 1;
    c->refused = rc;
    pthread_mutex_unlock(&c->lock);
    if (rc == 0 && c->status_topic) {
        cw_mqtt_say_online(m, c);
        mosquitto_subscribe(m, NULL, c->status_topic, 1);
    }
}

static void cw_mqtt_on_message(struct mosquitto *m, void *obj, const struct mosquitto_message *message) {
    cw_mqtt *c = obj;
    if (!c->status_topic || !message->topic || strcmp(message->topic, c->status_topic) != 0) return;
    pthread_mutex_lock(&c->lock);
    int leaving = c->leaving;
    pthread_mutex_unlock(&c->lock);
    if (!leaving && message->payloadlen == 7 && memcmp(message->payload, "offline", 7) == 0) cw_mqtt_say_online(m, c);
}

/* The next `offline` on the status topic is this client's own goodbye: left as it is. */
static inline void cw_mqtt_set_leaving(cw_mqtt *c) {
    pthread_mutex_lock(&c->lock);
    c->leaving = 1;
    pthread_mutex_unlock(&c->lock);
}

static void cw_mqtt_on_disconnect(struct mosquitto *m, void *obj, int rc) {
    (void)m;
    (void)rc;
    cw_mqtt *c = obj;
    pthread_mutex_lock(&c->lock);
    if (c->connected) clock_gettime(CLOCK_MONOTONIC, &c->down_since);
    c->connected = 0;
    pthread_mutex_unlock(&c->lock);
}

static void cw_mqtt_on_publish(struct mosquitto *m, void *obj, int mid) {
    (void)m;
    cw_mqtt *c = obj;
    pthread_mutex_lock(&c->lock);
    if (c->ack_count == c->ack_capacity) {
        size_t capacity = c->ack_capacity ? c->ack_capacity * 2 : 256;
        int *grown = realloc(c->acks, capacity * sizeof(int));
        if (grown) {
            c->acks = grown;
            c->ack_capacity = capacity;
        }
    }
    /* Out of memory: the acknowledgement is not counted, and the caller's wait fails and sends the batch again. */
    if (c->ack_count < c->ack_capacity) c->acks[c->ack_count++] = mid;
    pthread_mutex_unlock(&c->lock);
}

/* A client with credentials when given, TLS (the system's authorities, or `ca_file`) when `tls`, and with a
 * `status_topic` a will (retained `offline`) and `online` said on every connection; connected asynchronously by
 * its own thread, which reconnects. */
static inline cw_mqtt *cw_mqtt_new(const char *client_id, const char *user, const char *password, int tls,
                                   const char *ca_file, const char *status_topic, int *error) {
    mosquitto_lib_init();
    cw_mqtt *c = calloc(1, sizeof(cw_mqtt));
    if (!c) { *error = MOSQ_ERR_NOMEM; return NULL; }
    pthread_mutex_init(&c->lock, NULL);
    c->mosq = mosquitto_new(client_id, 1, c);
    if (!c->mosq) { free(c); *error = MOSQ_ERR_NOMEM; return NULL; }
    mosquitto_int_option(c->mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
    mosquitto_connect_callback_set(c->mosq, cw_mqtt_on_connect);
    mosquitto_disconnect_callback_set(c->mosq, cw_mqtt_on_disconnect);
    mosquitto_publish_callback_set(c->mosq, cw_mqtt_on_publish);
    mosquitto_log_callback_set(c->mosq, cw_mqtt_on_log);
    mosquitto_message_callback_set(c->mosq, cw_mqtt_on_message);
    int rc = MOSQ_ERR_SUCCESS;
    if (user) rc = mosquitto_username_pw_set(c->mosq, user, password);
    if (rc == MOSQ_ERR_SUCCESS && tls) rc = mosquitto_tls_set(c->mosq, ca_file, ca_file ? NULL : "/etc/ssl/certs", NULL, NULL, NULL);
    if (rc == MOSQ_ERR_SUCCESS && status_topic) {
        rc = mosquitto_will_set(c->mosq, status_topic, 7, "offline", 1, 1);
        c->status_topic = strdup(status_topic);
        if (!c->status_topic) rc = MOSQ_ERR_NOMEM;
    }
    if (rc != MOSQ_ERR_SUCCESS) {
        mosquitto_destroy(c->mosq);
        free(c->status_topic);
        free(c);
        *error = rc;
        return NULL;
    }
    *error = 0;
    return c;
}

static inline int cw_mqtt_start(cw_mqtt *c, const char *host, int port) {
    /* A broker that restarts is tried again after 1, 2, 4, 8 s, then every 10 s. */
    mosquitto_reconnect_delay_set(c->mosq, 1, 10, 1);
    int rc = mosquitto_connect_async(c->mosq, host, port, 30);
    if (rc != MOSQ_ERR_SUCCESS && rc != MOSQ_ERR_ERRNO) return rc;
    return mosquitto_loop_start(c->mosq);
}

/* Whether the client is connected, the last CONNACK's refusal, how many connections it has had, and for how many
 * seconds the last one has been lost (0 while connected or before any was lost). */
static inline void cw_mqtt_state(cw_mqtt *c, int *connected, int *refused, long *connections, double *down_for) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&c->lock);
    *connected = c->connected;
    *connections = c->connections;
    *refused = c->refused;
    *down_for = c->connected || (c->down_since.tv_sec == 0 && c->down_since.tv_nsec == 0)
        ? 0
        : (double)(now.tv_sec - c->down_since.tv_sec) + (double)(now.tv_nsec - c->down_since.tv_nsec) / 1e9;
    pthread_mutex_unlock(&c->lock);
}

/* Moves up to `max` acknowledged message ids into `out`; returns how many. */
static inline int cw_mqtt_take_acks(cw_mqtt *c, int *out, int max) {
    pthread_mutex_lock(&c->lock);
    size_t taken = c->ack_count < (size_t)max ? c->ack_count : (size_t)max;
    memcpy(out, c->acks, taken * sizeof(int));
    memmove(c->acks, c->acks + taken, (c->ack_count - taken) * sizeof(int));
    c->ack_count -= taken;
    pthread_mutex_unlock(&c->lock);
    return (int)taken;
}

static inline int cw_mqtt_publish(cw_mqtt *c, const char *topic, const void *payload, int length, int retain,
                                  int *mid) {
    return mosquitto_publish(c->mosq, mid, topic, length, payload, 1, retain ? true : false);
}

static inline void cw_mqtt_free(cw_mqtt *c) {
    mosquitto_disconnect(c->mosq);
    mosquitto_loop_stop(c->mosq, true);
    mosquitto_destroy(c->mosq);
    pthread_mutex_destroy(&c->lock);
    free(c->acks);
    free(c->status_topic);
    free(c);
}

#endif
