/**
 * Consul discovery for Fairway: {@link dev.fairway.lb.consul.ConsulTargetSource} turns a service's
 * entries in Consul's health API into a live list of {@link dev.fairway.lb.Target}s, and
 * {@link dev.fairway.lb.consul.ConsulDiscovery} shares one agent connection (one HTTP client, a few
 * threads) among the sources of many services.
 *
 * <p>Only {@code ConsulTargetSource}, {@code ConsulDiscovery} and their builders are public API. Every
 * other type in this package is package-private engine (the watch loop, the reply mapper, the HTTP
 * transport, TLS setup, the rate limiter, the backoff, the metrics) and may change in any release.
 *
 * <p>Nullness: {@link org.jspecify.annotations.NullMarked}, as {@code dev.fairway.lb}: nothing is null
 * unless annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package dev.fairway.lb.consul;

import org.jspecify.annotations.NullMarked;
