package dev.fairway.it.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.hc5.FairwayHttpClient5;
import dev.fairway.lb.jdk.FairwayHttpClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Fairway's adapters for the JDK's HttpClient and Apache HttpClient 5 in a Spring application's
 * build, on the HttpClient 5 that Boot's BOM resolves (nothing pinned): two "orders" server
 * applications (Tomcat on loopback, Fairway's load reports on) and a third address that refuses
 * connections, called through each adapter. The same source runs in it/boot3 and it/boot4. The
 * servers start once; each test has its own balancer.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientAdaptersConsumerTest {
  private static final int CALLS = 12;

  private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();
  private MeterRegistry meters;
  private LoadBalancer orders;
  private int portA;
  private int portB;
  private int refusing;

  /** One "orders" instance: answers its name and counts what it served. */
  @RestController
  static class NamedController {
    static final Map<String, AtomicInteger> SERVED = new ConcurrentHashMap<>();

    private final String name;

    NamedController(@Value("${orders.name}") String name) {
      this.name = name;
    }

    @GetMapping("/orders")
    String orders() {
      SERVED.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
      return name;
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(NamedController.class)
  static class NamedApp {}

  @BeforeAll
  void startServers() throws IOException {
    portA = startOrders("a");
    portB = startOrders("b");
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      refusing = socket.getLocalPort(); // nothing listens there once closed: a connect is refused
    }
  }

  @BeforeEach
  void newBalancer() {
    NamedController.SERVED.clear();
    meters = new SimpleMeterRegistry();
    // Round robin over a, b, refusing: the refusing instance is tried within the first three calls,
    // and the split between a and b is exact enough to assert.
    orders = LoadBalancer.builder("orders")
        .targets(Target.of("127.0.0.1", portA).withId("a"), Target.of("127.0.0.1", portB).withId("b"),
            Target.of("127.0.0.1", refusing).withId("refusing"))
        .strategy(Strategy.roundRobin())
        .meterRegistry(meters)
        .build();
  }

  @AfterEach
  void closeBalancer() {
    orders.close();
  }

  @AfterAll
  void stopServers() {
    for (int i = contexts.size() - 1; i >= 0; i--) {
      contexts.get(i).close();
    }
  }

  private int startOrders(String name) {
    ConfigurableApplicationContext app = new SpringApplicationBuilder(NamedApp.class).properties(
        "server.port=0",
        "server.address=127.0.0.1",
        "orders.name=" + name,
        "fairway.server.load-reports.enabled=true").run();
    contexts.add(app);
    return Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
  }

  @Test
  void apacheHttpClient5_onTheVersionBootManages_balances_retriesTheRefusedCall_andReadsLoadReports() throws Exception {
    FairwayHttpClient5 fairway = FairwayHttpClient5.builder().service("orders", orders).build();
    try (CloseableHttpClient client = fairway.customize(HttpClients.custom()).build()) {
      for (int i = 0; i < CALLS; i++) {
        String body = client.execute(new HttpGet("http://orders/orders"), response -> {
          assertThat(response.getCode()).isEqualTo(200);
          return EntityUtils.toString(response.getEntity());
        });
        assertThat(body).isIn("a", "b");
      }
    }
    assertBalancedAndEjected();
  }

  @Test
  void jdkHttpClient_balances_retriesTheRefusedCall_andReadsLoadReports() throws Exception {
    HttpClient client = FairwayHttpClient.builder(
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build())
        .service("orders", orders)
        .build();
    for (int i = 0; i < CALLS; i++) {
      HttpResponse<String> response = client.send(
          HttpRequest.newBuilder(URI.create("http://orders/orders")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).isIn("a", "b");
    }
    assertBalancedAndEjected();
  }

  /** Every call served by a or b, alternating; the refusing instance ejected; every answer's report read. */
  private void assertBalancedAndEjected() {
    int a = served("a");
    int b = served("b");
    assertThat(a + b).isEqualTo(CALLS);
    assertThat(a).isBetween(CALLS / 2 - 1, CALLS / 2 + 1);
    for (TargetStatus status : orders.status()) {
      assertThat(status.state()).as(status.target().id())
          .isEqualTo(status.target().id().equals("refusing") ? TargetState.EJECTED : TargetState.HEALTHY);
    }
    assertThat(meters.get("fairway.load.reports").tag("service", "orders").tag("result", "parsed").counter().count())
        .isEqualTo(CALLS);
  }

  private static int served(String name) {
    AtomicInteger n = NamedController.SERVED.get(name);
    return n == null ? 0 : n.get();
  }
}
