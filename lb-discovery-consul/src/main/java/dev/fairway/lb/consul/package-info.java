/**
 * Consul discovery for Fairway: {@link dev.fairway.lb.consul.ConsulTargetSource} turns a service's
 * entries in Consul's health API into a live list of {@link dev.fairway.lb.Target}s.
 *
 * <p>Only {@code ConsulTargetSource} and its {@code Builder} are public API. Every other type in this
 * package is package-private engine (the watch loop, the reply mapper, the rate limiter, the backoff,
 * the metrics) and may change in any release.
 */
package dev.fairway.lb.consul;
