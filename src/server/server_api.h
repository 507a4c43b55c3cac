/* server_api.h - the OpenAI-compatible endpoints of `pith serve`, on top of
 * the HTTP server (server.h), which reaches them through Server.dispatch
 * and Server.generate (set by the command), so that the two never call
 * each other directly. */
#ifndef PITH_SERVER_API_H
#define PITH_SERVER_API_H

#include "server.h"

/* Binds the endpoints' slots to the engine's (after server_init). */
void api_init(Server *sv);
/* A complete request whose head passed the checks: answers GET endpoints
 * at once, leaves generation requests queued. */
void api_dispatch(Server *sv, Conn *c);
/* Takes a queued generation request into a free slot (or answers its error). */
void api_generate(Server *sv, Conn *c);
/* One batched step of every busy slot (server_run calls it while any is). */
void api_step(Server *sv);
/* --cache-dir: the prompts waiting to be written, written (server.h: idle). */
void api_idle(Server *sv);

#endif
