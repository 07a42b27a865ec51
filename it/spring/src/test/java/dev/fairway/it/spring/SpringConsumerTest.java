package dev.fairway.it.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import io.micrometer.core.instrument.MeterRegistry;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.spring.FairwayBalancers;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/**
 * A Spring Cloud application as a user writes it, on exactly what Boot's and Spring Cloud's BOMs
 * resolve: two "orders" server applications (Tomcat on loopback, Fairway's load reports on) and a
 * client application whose {@code @LoadBalanced RestClient}, whose Fairway {@code OkHttpClient} and
 * whose Boot-provided {@code RestClient.Builder} on the Apache HttpClient 5 path call {@code
 * http://orders/} over them and over a third address that refuses connections, listed through
 * Spring Cloud's simple discovery.
 *
 * <p>The same source runs in it/boot3 (Boot 3.5, Spring Cloud 2025.0) and it/boot4 (Boot 4.0,
 * Spring Cloud 2025.1), so it uses only API that both lines have.
 */
class SpringConsumerTest {
  private static final int CALLS = 12;

  private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();
  private final HttpClient http = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();
  private int portA;
  private int portB;
  private int refusing;
  private ConfigurableApplicationContext client;

  /** One "orders" instance: answers its name and counts what it served. */
  @RestController
  static class OrdersController {
    static final Map<String, AtomicInteger> SERVED = new ConcurrentHashMap<>();

    private final String name;

    OrdersController(@Value("${orders.name}") String name) {
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
  @Import(OrdersController.class)
  static class OrdersApp {}

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class ClientApp {
    /**
     * Boot's HttpClient 5 request factory, which carries Fairway's exec chain element
     * (fairway.httpclient5.enabled): the load-balanced builder's calls reach HttpClient already
     * resolved to an instance, and pass through it without a second pick.
     */
    @Bean
    ClientHttpRequestFactory httpClient5RequestFactory(ClientHttpRequestFactoryBuilder<?> factories) {
      return factories.build();
    }

    @Bean
    @LoadBalanced
    RestClient.Builder loadBalancedRestClientBuilder(ClientHttpRequestFactory httpClient5RequestFactory) {
      return RestClient.builder().requestFactory(httpClient5RequestFactory);
    }
  }

  /** A client application with no RestClient.Builder of its own: it takes Boot's. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class PlainClientApp {}

  @BeforeEach
  void start() throws IOException {
    OrdersController.SERVED.clear();
    portA = startOrders("a");
    portB = startOrders("b");
    refusing = refusingPort();
    client = run(new SpringApplicationBuilder(ClientApp.class).properties(
        "server.port=0",
        "server.address=127.0.0.1",
        "management.endpoints.web.exposure.include=fairway",
        "spring.cloud.discovery.client.simple.instances.orders[0].uri=http://127.0.0.1:" + portA,
        "spring.cloud.discovery.client.simple.instances.orders[0].instance-id=a",
        "spring.cloud.discovery.client.simple.instances.orders[1].uri=http://127.0.0.1:" + portB,
        "spring.cloud.discovery.client.simple.instances.orders[1].instance-id=b",
        "spring.cloud.discovery.client.simple.instances.orders[2].uri=http://127.0.0.1:" + refusing,
        "spring.cloud.discovery.client.simple.instances.orders[2].instance-id=refusing",
        // round robin: the refusing instance is reached within the first three calls, and the
        // split between a and b is exact enough to assert
        "fairway.services.orders.strategy=round-robin",
        "fairway.okhttp.enabled=true",
        "fairway.httpclient5.enabled=true"));
  }

  @AfterEach
  void stop() {
    for (int i = contexts.size() - 1; i >= 0; i--) {
      contexts.get(i).close();
    }
  }

  private ConfigurableApplicationContext run(SpringApplicationBuilder builder) {
    ConfigurableApplicationContext context = builder.run();
    contexts.add(context);
    return context;
  }

  private int startOrders(String name) {
    ConfigurableApplicationContext orders = run(new SpringApplicationBuilder(OrdersApp.class).properties(
        "server.port=0",
        "server.address=127.0.0.1",
        "orders.name=" + name,
        "fairway.server.load-reports.enabled=true"));
    return Integer.parseInt(orders.getEnvironment().getProperty("local.server.port"));
  }

  /** A loopback port that was just free: nothing listens there, so a connect is refused. */
  private static int refusingPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  @Test
  void restClient_balancesOverTheInstances_ejectsTheRefusingOne_andReadsTheServersLoadReports() throws Exception {
    RestClient orders = client.getBean(RestClient.Builder.class).baseUrl("http://orders").build();

    for (int i = 0; i < CALLS; i++) {
      // Spring Cloud LoadBalancer's retry (spring-retry) sends the refused call to another instance
      assertThat(orders.get().uri("/orders").retrieve().body(String.class)).isIn("a", "b");
    }

    // Round robin over a, b, refusing: one refused attempt ejects "refusing", its call is retried on
    // a or b, and the rest alternate between a and b.
    int a = served("a");
    int b = served("b");
    assertThat(a + b).isEqualTo(CALLS);
    assertThat(a).isBetween(CALLS / 2 - 1, CALLS / 2 + 1);

    Map<String, String> targets = endpointTargets("orders");
    assertThat(targets).containsOnlyKeys("a", "b", "refusing");
    assertThat(targets.get("refusing")).contains("\"state\":\"EJECTED\"");
    assertThat(targets.get("a")).contains("\"state\":\"HEALTHY\"");
    assertThat(targets.get("b")).contains("\"state\":\"HEALTHY\"");
    assertEveryAnswersLoadReportWasRead();
    // One balancer per call: the Apache HttpClient 5 path, under the same builder, picked none.
    assertThat(client.getBean(MeterRegistry.class).find("fairway.requests").tag("balancer", "httpclient5:orders")
        .timers()).allSatisfy(t -> assertThat(t.count()).isZero());
  }

  @Test
  void httpClient5Path_bootsRestClientBuilder_balancesOverTheInstances_andEjectsTheRefusingOne() throws Exception {
    ConfigurableApplicationContext plain = run(new SpringApplicationBuilder(PlainClientApp.class).properties(
        "spring.main.web-application-type=none",
        "spring.cloud.discovery.client.simple.instances.orders[0].uri=http://127.0.0.1:" + portA,
        "spring.cloud.discovery.client.simple.instances.orders[0].instance-id=a",
        "spring.cloud.discovery.client.simple.instances.orders[1].uri=http://127.0.0.1:" + portB,
        "spring.cloud.discovery.client.simple.instances.orders[1].instance-id=b",
        "spring.cloud.discovery.client.simple.instances.orders[2].uri=http://127.0.0.1:" + refusing,
        "spring.cloud.discovery.client.simple.instances.orders[2].instance-id=refusing",
        "fairway.services.orders.strategy=round-robin",
        "fairway.httpclient5.enabled=true"));
    RestClient orders = plain.getBean(RestClient.Builder.class).baseUrl("http://orders").build();

    for (int i = 0; i < CALLS; i++) {
      // Fairway's element in HttpClient retries the refused attempt on another instance itself.
      assertThat(orders.get().uri("/orders").retrieve().body(String.class)).isIn("a", "b");
    }

    int a = served("a");
    int b = served("b");
    assertThat(a + b).isEqualTo(CALLS);
    assertThat(a).isBetween(CALLS / 2 - 1, CALLS / 2 + 1);
    LoadBalancer balancer = plain.getBean(FairwayBalancers.class).balancers().get("httpclient5:orders");
    assertThat(balancer.status()).filteredOn(s -> s.target().id().equals("refusing"))
        .singleElement().extracting(TargetStatus::state).isEqualTo(TargetState.EJECTED);
    MeterRegistry meters = plain.getBean(MeterRegistry.class);
    assertThat(meters.get("fairway.load.reports").tag("service", "orders").tag("result", "parsed").counter().count())
        .isEqualTo(CALLS);
    // Every answered call, and the refused attempt, were the HTTP client 5 path's picks.
    assertThat(meters.find("fairway.requests").tag("balancer", "httpclient5:orders").timers().stream()
        .mapToLong(io.micrometer.core.instrument.Timer::count).sum()).isEqualTo(CALLS + 1);
  }

  @Test
  void okHttpPath_onOkHttp5_balancesOverTheInstances_andEjectsTheRefusingOne() throws Exception {
    OkHttpClient okHttp = client.getBean(OkHttpClient.class);

    for (int i = 0; i < CALLS; i++) {
      // The interceptor retries the refused attempt on another instance itself.
      try (okhttp3.Response response = okHttp.newCall(new Request.Builder().url("http://orders/orders").build()).execute()) {
        assertThat(response.code()).isEqualTo(200);
        assertThat(response.body().string()).isIn("a", "b");
      }
    }

    int a = served("a");
    int b = served("b");
    assertThat(a + b).isEqualTo(CALLS);
    assertThat(a).isBetween(CALLS / 2 - 1, CALLS / 2 + 1);
    Map<String, String> targets = endpointTargets("okhttp:orders");
    assertThat(targets).containsOnlyKeys("a", "b", "refusing");
    assertThat(targets.get("refusing")).contains("\"state\":\"EJECTED\"");
    assertEveryAnswersLoadReportWasRead();
  }

  @Test
  void server_setsItsLoadReportHeader() throws Exception {
    HttpResponse<String> response = http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + portA + "/orders")).build(),
        HttpResponse.BodyHandlers.ofString());

    assertThat(response.body()).isEqualTo("a");
    assertThat(response.headers().firstValue("endpoint-load-metrics").orElse("(none)"))
        .startsWith("TEXT application_utilization=")
        .contains("named_metrics.rif=");
  }

  /**
   * The servers' endpoint-load-metrics header of every answer reached the client and was parsed
   * (whether the balancer keeps a report depends on how plausible it is against its own timings,
   * which a loaded machine moves, so the kept values are not asserted).
   */
  private void assertEveryAnswersLoadReportWasRead() {
    MeterRegistry meters = client.getBean(MeterRegistry.class);
    assertThat(meters.get("fairway.load.reports").tag("service", "orders").tag("result", "parsed").counter().count())
        .isEqualTo(CALLS);
  }

  private static int served(String name) {
    AtomicInteger n = OrdersController.SERVED.get(name);
    return n == null ? 0 : n.get();
  }

  /**
   * GET /actuator/fairway of the client, and for the balancer named {@code balancer} each target's
   * JSON object by id. Read as text: Boot 3 writes the endpoint with Jackson 2, Boot 4 with Jackson 3.
   */
  private Map<String, String> endpointTargets(String balancer) throws Exception {
    String port = client.getEnvironment().getProperty("local.server.port");
    HttpResponse<String> response = http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/fairway/" + balancer)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(response.body()).contains("\"service\":\"orders\"");
    Map<String, String> targets = new HashMap<>();
    Matcher m = Pattern.compile("\\{\"id\":\"([^\"]+)\"[^}]*}").matcher(response.body());
    while (m.find()) {
      targets.put(m.group(1), m.group());
    }
    return targets;
  }
}
