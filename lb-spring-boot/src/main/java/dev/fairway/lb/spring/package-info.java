/**
 * Fairway for Spring Boot: the starter {@code dev.fairway:fairway-spring-boot-starter}.
 *
 * <p>Public here: {@link dev.fairway.lb.spring.FairwayProperties} (the {@code fairway.*}
 * properties), {@link dev.fairway.lb.spring.FairwayBalancers} (the running balancers), the
 * auto-configuration classes, {@link dev.fairway.lb.spring.FairwayLoadBalancerClientConfiguration}
 * (for {@code @LoadBalancerClient(configuration = ...)}), and the client paths' beans {@link
 * dev.fairway.lb.spring.FairwayOkHttp} and {@link dev.fairway.lb.spring.FairwayHttpClient5Path}
 * (for a client of your own). Everything else is package-private.
 *
 * <p>How a call flows: a {@code @LoadBalanced} client asks Spring Cloud LoadBalancer for the
 * service's balancer, which by default is a {@code FairwayReactorLoadBalancer}: it feeds the
 * service's instance list to one Fairway {@code LoadBalancer} and picks; the chosen instance carries
 * the pick, and {@code FairwayLoadBalancerLifecycle} reports the call's outcome to it.
 */
@NullMarked
package dev.fairway.lb.spring;

import org.jspecify.annotations.NullMarked;
