package dev.fairway.samples;

import java.util.Locale;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.metrics.buffering.BufferingApplicationStartup;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.client.RestClient;

/**
 * How much the starter adds to a context's start: {@code java -cp fairway-samples.jar
 * dev.fairway.samples.SpringStartupProbe with|without}. Starts one minimal non-web Boot application
 * with a {@code @LoadBalanced RestClient} for one service ({@code orders}, three instances from
 * simple discovery, its balancer built at startup through {@code eager-load}), with the starter's
 * auto-configurations included ({@code with}) or excluded ({@code without}, via {@code
 * spring.autoconfigure.exclude}: Spring Cloud LoadBalancer's round robin then balances), and prints
 * one line: {@code starter=with balancer=FairwayReactorLoadBalancer refresh_ms=... run_ms=...
 * run_cpu_ms=...}. {@code refresh_ms} is the duration of Boot's {@code spring.context.refresh}
 * startup step, {@code run_ms} the time {@code SpringApplication.run} took in all, {@code
 * run_cpu_ms} the CPU time the main thread spent in it (Boot starts a context on that one thread;
 * on a machine that others keep busy, wall-clock times mostly measure the wait for a core). One
 * start per JVM: run it in fresh JVMs, alternating.
 */
public final class SpringStartupProbe {
  static final String STARTER_AUTO_CONFIGURATIONS = String.join(",",
      "dev.fairway.lb.spring.FairwayAutoConfiguration",
      "dev.fairway.lb.spring.FairwayLoadBalancerAutoConfiguration",
      "dev.fairway.lb.spring.FairwayEndpointAutoConfiguration",
      "dev.fairway.lb.spring.FairwayLoadReportAutoConfiguration");

  private SpringStartupProbe() {}

  public static void main(String[] args) {
    boolean with = args.length == 1 && args[0].equals("with");
    if (args.length != 1 || !(with || args[0].equals("without"))) {
      System.err.println("usage: SpringStartupProbe with|without");
      System.exit(2);
    }
    System.setProperty(LoggingSystem.SYSTEM_PROPERTY, LoggingSystem.NONE);
    BufferingApplicationStartup startup = new BufferingApplicationStartup(10_000);
    SpringApplicationBuilder app = new SpringApplicationBuilder(Application.class)
        .web(WebApplicationType.NONE)
        .bannerMode(Banner.Mode.OFF)
        .logStartupInfo(false)
        .applicationStartup(startup)
        .properties(
            "spring.cloud.discovery.client.simple.instances.orders[0].uri=http://127.0.0.1:8081",
            "spring.cloud.discovery.client.simple.instances.orders[1].uri=http://127.0.0.1:8082",
            "spring.cloud.discovery.client.simple.instances.orders[2].uri=http://127.0.0.1:8083",
            "spring.cloud.loadbalancer.eager-load.clients=orders");
    if (!with) {
      app.properties("spring.autoconfigure.exclude=" + STARTER_AUTO_CONFIGURATIONS);
    }
    java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
    long startedCpu = threads.getCurrentThreadCpuTime();
    long started = System.nanoTime();
    try (ConfigurableApplicationContext context = app.run()) {
      long run = System.nanoTime() - started;
      long runCpu = threads.getCurrentThreadCpuTime() - startedCpu;
      context.getBean(RestClient.class); // the client exists
      String balancer = context.getBean(LoadBalancerClientFactory.class).getInstance("orders").getClass().getSimpleName();
      long refresh = startup.getBufferedTimeline().getEvents().stream()
          .filter(e -> e.getStartupStep().getName().equals("spring.context.refresh"))
          .mapToLong(e -> e.getDuration().toNanos())
          .sum();
      System.out.printf(Locale.ROOT, "starter=%s balancer=%s refresh_ms=%.1f run_ms=%.1f run_cpu_ms=%.1f%n",
          with ? "with" : "without", balancer, refresh / 1e6, run / 1e6, runCpu / 1e6);
    }
  }

  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class Application {
    @Bean
    @LoadBalanced
    RestClient.Builder loadBalancedRestClientBuilder() {
      return RestClient.builder();
    }

    @Bean
    RestClient orders(@LoadBalanced RestClient.Builder builder) {
      return builder.baseUrl("http://orders").build();
    }
  }
}
