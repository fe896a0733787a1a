#ifndef CALWATCH_CMOSQUITTO_SHIM_H
#define CALWATCH_CMOSQUITTO_SHIM_H

#include <mosquitto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One client and what its network thread (mosquitto_loop_start) tells: whether it is connected, the broker's last
 * CONNACK code, and how many QoS 1 publishes the broker has acknowledged (PUBACK), counted so a caller can wait
 * for a batch. */
typedef struct {
    struct mosquitto *mosq;
    pthread_mutex_t lock;
    long acknowledged;
    int connected;
    int refused; /* the last CONNACK's code when not 0 (bad credentials, not authorised) */
} cw_mqtt;

static void cw_mqtt_on_connect(struct mosquitto *m, void *obj, int rc) {
    (void)m;
    cw_mqtt *c = obj;
    pthread_mutex_lock(&c->lock);
    c->connected = rc == 0;
    c->refused = rc;
    pthread_mutex_unlock(&c->lock);
}

static void cw_mqtt_on_disconnect(struct mosquitto *m, void *obj, int rc) {
    (void)m;
    (void)rc;
    cw_mqtt *c = obj;
    pthread_mutex_lock(&c->lock);
    c->connected = 0;
    pthread_mutex_unlock(&c->lock);
}

static void cw_mqtt_on_publish(struct mosquitto *m, void *obj, int mid) {
    (void)m;
    (void)mid;
    cw_mqtt *c = obj;
    pthread_mutex_lock(&c->lock);
    c->acknowledged += 1;
    pthread_mutex_unlock(&c->lock);
}

/* A client with a will (retained `offline` on `will_topic`), credentials when given, TLS (the system's
 * authorities, or `ca_file`) when `tls`; connected asynchronously by its own thread, which reconnects. */
static inline cw_mqtt *cw_mqtt_new(const char *client_id, const char *user, const char *password, int tls,
                                   const char *ca_file, const char *will_topic, int *error) {
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
    int rc = MOSQ_ERR_SUCCESS;
    if (user) rc = mosquitto_username_pw_set(c->mosq, user, password);
    if (rc == MOSQ_ERR_SUCCESS && tls) rc = mosquitto_tls_set(c->mosq, ca_file, ca_file ? NULL : "/etc/ssl/certs", NULL, NULL, NULL);
    if (rc == MOSQ_ERR_SUCCESS && will_topic) rc = mosquitto_will_set(c->mosq, will_topic, 7, "offline", 1, 1);
    if (rc != MOSQ_ERR_SUCCESS) {
        mosquitto_destroy(c->mosq);
        free(c);
        *error = rc;
        return NULL;
    }
    *error = 0;
    return c;
}

static inline int cw_mqtt_start(cw_mqtt *c, const char *host, int port) {
    mosquitto_reconnect_delay_set(c->mosq, 1, 30, 1);
    int rc = mosquitto_connect_async(c->mosq, host, port, 30);
    if (rc != MOSQ_ERR_SUCCESS && rc != MOSQ_ERR_ERRNO) return rc;
    return mosquitto_loop_start(c->mosq);
}

static inline void cw_mqtt_state(cw_mqtt *c, int *connected, int *refused, long *acknowledged) {
    pthread_mutex_lock(&c->lock);
    *connected = c->connected;
    *refused = c->refused;
    *acknowledged = c->acknowledged;
    pthread_mutex_unlock(&c->lock);
}

static inline int cw_mqtt_publish(cw_mqtt *c, const char *topic, const void *payload, int length, int retain) {
    return mosquitto_publish(c->mosq, NULL, topic, length, payload, 1, retain ? true : false);
}

static inline void cw_mqtt_free(cw_mqtt *c) {
    mosquitto_disconnect(c->mosq);
    mosquitto_loop_stop(c->mosq, true);
    mosquitto_destroy(c->mosq);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

#endif
