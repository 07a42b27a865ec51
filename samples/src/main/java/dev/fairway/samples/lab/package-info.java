/**
 * The scenario lab: four in-process backends with fixed worker pools, closed-loop users calling
 * through OkHttp and {@code LoadBalancingInterceptor}, and the limit no router can beat
 * ({@link dev.fairway.samples.lab.Limit}). {@link dev.fairway.samples.lab.Lab} runs it;
 * {@link dev.fairway.samples.lab.LabOptions} is its command line. Not API.
 */
package dev.fairway.samples.lab;
