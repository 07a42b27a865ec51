/**
 * A faithful in-process Consul agent for tests ({@link dev.fairway.lb.consul.fake.FakeConsul}),
 * shipped in this module's test-jar so other modules (samples, lb-okhttp end-to-end tests) can
 * register MockWebServer backends in it and inject {@link dev.fairway.lb.consul.fake.Fault}s.
 */
package dev.fairway.lb.consul.fake;
