package dev.fairway.samples;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/**
 * The README's "Spring Boot" example as a program ({@code java -jar fairway-samples.jar spring}):
 * two Spring Boot services on loopback. {@code orders} runs three times, each a servlet application
 * on a port the OS picks, with the starter's load reports on; the caller, a non-web application,
 * calls {@code http://orders/orders} through a {@code @LoadBalanced RestClient}, which the starter
 * balances with Fairway's default strategy over the three instances given by simple discovery.
 * After six calls one instance stops; the next six still succeed (Spring's retry sends a refused
 * call to another instance, and Fairway ejects the stopped one at its first refusal).
 */
public final class SpringBootSample {
  static final int CALLS_PER_PHASE = 6;
  /**
   * Tomcat logs through java.util.logging, which Boot leaves alone here (its logging system is off
   * for a quiet console): its INFO lines on start and stop would bury the calls. Kept strongly
   * reachable: java.util.logging holds loggers weakly, and the level would be lost.
   */
  private static final java.util.logging.Logger TOMCAT_LOG = java.util.logging.Logger.getLogger("org.apache");

  private SpringBootSample() {}

  public static void main(String[] args) {
    System.exit(run(System.out).failures() == 0 ? 0 : 1);
  }

  /** What the caller saw: each call's answer ("orders-2: ..." or the error), and the failures. */
  public record Outcome(List<String> answers, List<String> loadReports, String stopped, int failures) {}

  /** Runs both services, makes the calls, prints each answer to {@code out}, and stops everything. */
  public static Outcome run(PrintStream out) {
    if (System.getProperty(LoggingSystem.SYSTEM_PROPERTY) == null) {
      System.setProperty(LoggingSystem.SYSTEM_PROPERTY, LoggingSystem.NONE); // a quiet console
    }
    TOMCAT_LOG.setLevel(java.util.logging.Level.WARNING);
    List<ConfigurableApplicationContext> orders = new ArrayList<>();
    ConfigurableApplicationContext caller = null;
    try {
      for (int i = 1; i <= 3; i++) {
        orders.add(startOrders("orders-" + i));
      }
      caller = startCaller(orders);
      RestClient client = caller.getBean(RestClient.class);
      List<String> answers = new ArrayList<>();
      List<String> reports = new ArrayList<>();
      int failures = call(client, "", out, answers, reports);
      ConfigurableApplicationContext stopping = orders.get(1);
      String stopped = stopping.getEnvironment().getProperty("instance.name");
      stopping.close();
      out.println(stopped + " stopped");
      failures += call(client, stopped, out, answers, reports);
      return new Outcome(answers, reports, stopped, failures);
    } finally {
      if (caller != null) {
        caller.close();
      }
      for (ConfigurableApplicationContext o : orders) {
        o.close();
      }
    }
  }

  private static int call(RestClient client, String stopped, PrintStream out, List<String> answers,
      List<String> reports) {
    int failures = 0;
    for (int i = 0; i < CALLS_PER_PHASE; i++) {
      try {
        ResponseEntity<String> response = client.get().uri("/orders").retrieve().toEntity(String.class);
        String report = response.getHeaders().getFirst("endpoint-load-metrics");
        answers.add(response.getBody());
        reports.add(String.valueOf(report));
        out.println("GET http://orders/orders -> " + response.getBody() + "   (endpoint-load-metrics: " + report + ")");
      } catch (RuntimeException e) {
        failures++;
        answers.add(e.toString());
        out.println("GET http://orders/orders failed: " + e);
      }
    }
    return failures;
  }

  /** One instance of the orders service: Tomcat on a free port, 8 worker threads, load reports on. */
  static ConfigurableApplicationContext startOrders(String name) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("spring.application.name", "orders");
    p.put("instance.name", name);
    p.put("server.address", "127.0.0.1");
    p.put("server.port", "0");
    p.put("server.tomcat.threads.max", "8");
    p.put("fairway.server.load-reports.enabled", "true");
    return new SpringApplicationBuilder(OrdersService.class)
        .web(WebApplicationType.SERVLET)
        .bannerMode(Banner.Mode.OFF)
        .logStartupInfo(false)
        .properties(p)
        .run();
  }

  /** The caller: the orders instances through simple discovery, Fairway's defaults. */
  static ConfigurableApplicationContext startCaller(List<ConfigurableApplicationContext> orders) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("spring.application.name", "caller");
    for (int i = 0; i < orders.size(); i++) {
      int port = ((WebServerApplicationContext) orders.get(i)).getWebServer().getPort();
      p.put("spring.cloud.discovery.client.simple.instances.orders[" + i + "].uri", "http://127.0.0.1:" + port);
    }
    p.put("spring.cloud.loadbalancer.retry.enabled", "true"); // the default with spring-retry; said here for the reader
    return new SpringApplicationBuilder(CallerService.class)
        .web(WebApplicationType.NONE)
        .bannerMode(Banner.Mode.OFF)
        .logStartupInfo(false)
        .properties(p)
        .run();
  }

  /** The orders service: one endpoint that says which instance answered. */
  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  @Import(OrdersController.class)
  static class OrdersService {}

  @RestController
  static class OrdersController {
    private final String name;

    OrdersController(org.springframework.core.env.Environment environment) {
      this.name = environment.getProperty("instance.name", "orders");
    }

    @GetMapping("/orders")
    String orders() {
      return name + ": 3 open orders";
    }
  }

  /** The calling service: the load-balanced builder and a client for http://orders (README, "Spring Boot"). */
  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class CallerService {
    @Bean
    @LoadBalanced
    RestClient.Builder loadBalancedRestClientBuilder() {
      return RestClient.builder();
    }

    @Bean
    RestClient orders(@LoadBalanced RestClient.Builder loadBalancedRestClientBuilder) {
      return loadBalancedRestClientBuilder.baseUrl("http://orders").build();
    }
  }
}
