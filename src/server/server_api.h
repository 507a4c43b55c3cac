/* server_api.h - the OpenAI-compatible endpoints of `pith serve`, on top of
 * the HTTP server (server.h), which reaches them through Server.dispatch
 * and Server.generate (set by the command), so that the two never call
 * each other directly. */
#ifndef PITH_SERVER_API_H
#define PITH_SERVER_API_H

#include "server.h"

/* A complete request whose head passed the checks: answers GET endpoints
 * at once, leaves generation requests queued. */
void api_dispatch(Server *sv, Conn *c);
/* Serves a queued generation request (the connection is closed after). */
void api_generate(Server *sv, Conn *c);

#endif
