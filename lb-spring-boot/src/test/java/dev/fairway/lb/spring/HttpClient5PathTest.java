package dev.fairway.lb.spring;

import static dev.fairway.lb.spring.FairwayAutoConfigurationTest.findCause;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.HttpComponentsClientHttpRequestFactoryBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

/**
 * The Apache HttpClient 5 path in Boot contexts, against MockWebServers on loopback (TCP_NODELAY):
 * Boot's own {@code RestClient.Builder} sends {@code http://orders/...} through Fairway's exec chain
 * element, and a {@code @LoadBalanced} one is balanced once, by Spring Cloud LoadBalancer, never
 * twice. The same sources run on Boot 3.5 and, with -Pboot4, on Boot 4.0.
 */
class HttpClient5PathTest {
  private final Instances instances = new Instances();
  private ConfigurableApplicationContext context;

  @AfterEach
  void close() throws IOException {
    if (context != null) {
      context.close();
    }
    instances.close();
  }

  /** The instances of "orders" for {@link ListedDiscovery}, read on every getInstances call. */
  static final List<ServiceInstance> ORDERS = new CopyOnWriteArrayList<>();

  /** Discovery whose list a test changes while the application runs. */
  static final class ListedDiscovery implements DiscoveryClient {
    @Override
    public String description() {
      return "the test's list";
    }

    @Override
    public List<ServiceInstance> getInstances(String serviceId) {
      return serviceId.equals("orders") ? List.copyOf(ORDERS) : List.of();
    }

    @Override
    public List<String> getServices() {
      return List.of("orders");
    }
  }

  /** An application with no RestClient.Builder of its own: Boot's is the one it gets. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    ListedDiscovery listedDiscovery() {
      return new ListedDiscovery();
    }
  }

  private void listInstances() {
    ORDERS.clear();
    for (int i = 0; i < instances.ports.size(); i++) {
      ORDERS.add(new DefaultServiceInstance("i" + i, "orders", "127.0.0.1", instances.ports.get(i), false));
    }
  }

  private ConfigurableApplicationContext run(Class<?> app, String... properties) {
    List<String> all = new ArrayList<>(List.of("spring.main.web-application-type=none"));
    all.addAll(List.of(properties));
    context = new SpringApplicationBuilder(app).properties(all.toArray(String[]::new)).run();
    return context;
  }

  private static String get(RestClient client) {
    return client.get().uri("http://orders/work").retrieve().body(String.class);
  }

  /**
   * A RestTemplate from Boot's RestTemplateBuilder, whose package is Boot 3.5's or Boot 4's (these
   * sources compile against both).
   */
  private RestTemplate restTemplate() throws ReflectiveOperationException {
    Class<?> builder;
    try {
      builder = Class.forName("org.springframework.boot.restclient.RestTemplateBuilder"); // Boot 4
    } catch (ClassNotFoundException e) {
      builder = Class.forName("org.springframework.boot.web.client.RestTemplateBuilder"); // Boot 3.5
    }
    return (RestTemplate) builder.getMethod("build").invoke(context.getBean(builder));
  }

  /** Attempts the Apache HttpClient 5 path made (each one a pick of its balancer), from its meters. */
  private long hc5Attempts() {
    return context.getBean(MeterRegistry.class).find("fairway.requests").tag("balancer", "httpclient5:orders")
        .timers().stream().mapToLong(Timer::count).sum();
  }

  @Test
  void bootsRestClientBuilder_balancesOverTheInstances_ejectsARefusingOne_andFollowsDiscovery() throws Exception {
    MockWebServer a = instances.ok("a");
    MockWebServer b = instances.ok("b");
    int refusing = instances.refusing();
    listInstances();
    run(App.class, "fairway.httpclient5.enabled=true", "fairway.services.orders.strategy=round-robin",
        "fairway.httpclient5.refresh-interval=50ms");
    RestClient client = context.getBean(RestClient.Builder.class).build();

    for (int i = 0; i < 12; i++) {
      assertThat(get(client)).isIn("a", "b"); // Fairway retries the refused connect on another instance
    }
    assertThat(a.getRequestCount() + b.getRequestCount()).isEqualTo(12);
    // Round robin over a, b and the refusing one: the refused attempt ejects it, the rest alternate.
    assertThat(a.getRequestCount()).isBetween(5, 7);
    LoadBalancer balancer = context.getBean(FairwayBalancers.class).balancers().get("httpclient5:orders");
    assertThat(balancer).isSameAs(context.getBean(FairwayHttpClient5Path.class).balancers().get("orders"));
    assertThat(balancer.name()).isEqualTo("httpclient5:orders");
    assertThat(balancer.status()).filteredOn(s -> s.target().port() == refusing)
        .singleElement().extracting(TargetStatus::state).isEqualTo(TargetState.EJECTED);
    assertThat(hc5Attempts()).isEqualTo(13); // 12 answered, 1 refused

    // Boot's RestTemplateBuilder takes the same request factory builder.
    RestTemplate template = restTemplate();
    for (int i = 0; i < 4; i++) {
      assertThat(template.getForObject("http://orders/work", String.class)).isIn("a", "b");
    }
    assertThat(hc5Attempts()).isEqualTo(17);

    // A new instance in discovery reaches the balancer at the next read.
    MockWebServer c = instances.ok("c");
    ORDERS.add(new DefaultServiceInstance("i3", "orders", "127.0.0.1", c.getPort(), false));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (balancer.status().size() < 4 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(balancer.status()).extracting(s -> s.target().id()).containsExactly("i0", "i1", "i2", "i3");
    for (int i = 0; i < 6; i++) {
      assertThat(get(client)).isIn("a", "b", "c");
    }
    assertThat(c.getRequestCount()).isPositive();

    FairwayBalancers registry = context.getBean(FairwayBalancers.class);
    context.close();
    assertThat(registry.balancers()).doesNotContainKey("httpclient5:orders");
  }

  /**
   * Two builders over the same Fairway HttpClient 5 request factory: a {@code @LoadBalanced} one,
   * whose URL Spring Cloud LoadBalancer turns into an instance's address before HttpClient sees it,
   * and a plain one.
   */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class TwoBuildersApp {
    /** Spring Cloud LoadBalancer's picks of each instance port (any client), as it starts them. */
    static final Map<Integer, Integer> CLOUD_PICKS = new ConcurrentHashMap<>();

    @Bean
    ClientHttpRequestFactory fairwayHttpClient5Factory(ClientHttpRequestFactoryBuilder<?> factories) {
      return factories.build(); // a bean, so the context closes its HttpClient
    }

    @Bean
    @LoadBalanced
    RestClient.Builder loadBalanced(@Qualifier("fairwayHttpClient5Factory") ClientHttpRequestFactory factory) {
      return RestClient.builder().requestFactory(factory);
    }

    @Bean
    @Primary
    RestClient.Builder plain(@Qualifier("fairwayHttpClient5Factory") ClientHttpRequestFactory factory) {
      return RestClient.builder().requestFactory(factory);
    }

    @Bean
    LoadBalancerLifecycle<Object, Object, ServiceInstance> cloudPicks() {
      return new LoadBalancerLifecycle<>() {
        @Override
        public void onStart(Request<Object> request) {}

        @Override
        public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
          CLOUD_PICKS.merge(lbResponse.getServer().getPort(), 1, Integer::sum);
        }

        @Override
        public void onComplete(CompletionContext<Object, ServiceInstance, Object> completionContext) {}
      };
    }
  }

  @Test
  void oneBalancerPerCall_loadBalancedRestClientPicksInSpringCloudOnly_plainOneInHttpClient5Only() throws Exception {
    MockWebServer a = instances.ok("a");
    MockWebServer b = instances.ok("b");
    TwoBuildersApp.CLOUD_PICKS.clear();
    List<String> properties = new ArrayList<>(List.of(instances.properties("orders")));
    properties.addAll(List.of("fairway.httpclient5.enabled=true", "fairway.services.orders.strategy=round-robin"));
    run(TwoBuildersApp.class, properties.toArray(String[]::new));
    assertThat(context.getBean(ClientHttpRequestFactoryBuilder.class)).isInstanceOf(HttpComponentsClientHttpRequestFactoryBuilder.class);
    RestClient loadBalanced = context.getBean("loadBalanced", RestClient.Builder.class).build();
    RestClient plain = context.getBean("plain", RestClient.Builder.class).build();

    for (int i = 0; i < 8; i++) {
      assertThat(get(loadBalanced)).isIn("a", "b");
    }
    // Spring Cloud LoadBalancer picked every call; HttpClient saw 127.0.0.1, no service name, and
    // passed the calls through without a pick of its own.
    assertThat(TwoBuildersApp.CLOUD_PICKS.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(8);
    assertThat(hc5Attempts()).isZero();
    assertThat(a.getRequestCount() + b.getRequestCount()).isEqualTo(8);

    for (int i = 0; i < 8; i++) {
      assertThat(get(plain)).isIn("a", "b");
    }
    // The plain builder's calls were picked by the HttpClient 5 path alone, round robin over both.
    assertThat(TwoBuildersApp.CLOUD_PICKS.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(8);
    assertThat(hc5Attempts()).isEqualTo(8);
    assertThat(a.getRequestCount() + b.getRequestCount()).isEqualTo(16);
    assertThat(a.getRequestCount()).isEqualTo(8);
  }

  @Test
  void offUnlessEnabled_andBootsBuilderIsLeftAsItWas() throws Exception {
    instances.ok("a");
    listInstances();
    for (String[] properties : List.of(new String[] {"fairway.services.orders.strategy=random"},
        new String[] {"fairway.httpclient5.enabled=false", "fairway.services.orders.strategy=random"})) {
      run(App.class, properties);
      assertThat(context.getBeansOfType(FairwayHttpClient5Path.class)).isEmpty();
      assertThat(context.getBean(FairwayBalancers.class).balancers()).doesNotContainKey("httpclient5:orders")
          .containsKey("orders"); // Spring Cloud LoadBalancer's, there either way
      assertThat(context.getBean(ClientHttpRequestFactoryBuilder.class)).isInstanceOf(HttpComponentsClientHttpRequestFactoryBuilder.class);
      assertThat(context.getBean(RestClient.Builder.class)).isNotNull();
      context.close();
      context = null;
    }
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      // Settings the one adapter applies to every service must be equal...
      "fairway.services.payments.max-attempts=2|fairway.services.payments.max-attempts|"
          + "fairway.services.payments.max-attempts: 2 (expected: 3 (the default), as fairway.services.orders.max-attempts:"
          + " the Apache HttpClient 5 path applies one value to every service, see fairway.httpclient5.enabled)",
      "fairway.services.orders.retry-budget.percent=0.5|fairway.services.orders.retry-budget.percent|"
          + "fairway.services.orders.retry-budget.percent: 0.5 (expected: 0.2 (the default), as"
          + " fairway.services.payments.retry-budget.percent: the Apache HttpClient 5 path applies one value to every"
          + " service, see fairway.httpclient5.enabled)",
      "fairway.services.payments.failure-status-codes=500,503|fairway.services.payments.failure-status-codes|"
          + "fairway.services.payments.failure-status-codes: 500,503 (expected: 500,502,503,504 (the default), as"
          + " fairway.services.orders.failure-status-codes: the Apache HttpClient 5 path applies one value to every"
          + " service, see fairway.httpclient5.enabled)",
      "fairway.services.payments.affinity-header=X-User|fairway.services.payments.affinity-header|"
          + "fairway.services.payments.affinity-header: X-User (expected: none (the default), as"
          + " fairway.services.orders.affinity-header: the Apache HttpClient 5 path applies one value to every"
          + " service, see fairway.httpclient5.enabled)",
      "fairway.services.orders.hedging=50ms|fairway.services.orders.hedging|"
          + "fairway.services.orders.hedging: 50ms (expected: off (the default), as fairway.services.payments.hedging:"
          + " the Apache HttpClient 5 path applies one value to every service, see fairway.httpclient5.enabled)",
      "fairway.default.hedging=p95;fairway.services.payments.hedging=p99|fairway.services.payments.hedging|"
          + "fairway.services.payments.hedging: p99 (expected: p95, as fairway.default.hedging: the Apache HttpClient 5"
          + " path applies one value to every service, see fairway.httpclient5.enabled)",
      "fairway.default.hedging=50ms;fairway.services.payments.hedging.loser-hold=2s|"
          + "fairway.services.payments.hedging.loser-hold|fairway.services.payments.hedging.loser-hold: 2s (expected:"
          + " 10s (the default), as fairway.default.hedging.loser-hold: the Apache HttpClient 5 path applies one value"
          + " to every service, see fairway.httpclient5.enabled)",
      // ...and each value is one the adapter's builder takes.
      "fairway.services.orders.max-attempts=11|fairway.services.orders.max-attempts|"
          + "fairway.services.orders.max-attempts: 11 (expected: 1..10)",
      "fairway.httpclient5.refresh-interval=1ms|fairway.httpclient5.refresh-interval|"
          + "fairway.httpclient5.refresh-interval: PT0.001S (expected: at least 10ms)",
  })
  void badOrUnequalSetting_failsStartup_namingThePropertyAndTheValues(String settings, String property, String message) {
    List<String> properties = new ArrayList<>(List.of("fairway.httpclient5.enabled=true",
        "fairway.services.orders.strategy=random", "fairway.services.payments.strategy=random"));
    properties.addAll(List.of(settings.split(";")));
    Throwable failure = catchStartupFailure(properties.toArray(String[]::new));
    FairwayConfigurationException cause = findCause(failure);
    assertThat(cause.getMessage()).isEqualTo(message);
    assertThat(cause.property()).isEqualTo(property);
    FailureAnalysis analysis = new FairwayConfigurationFailureAnalyzer().analyze(failure);
    assertThat(analysis.getDescription()).isEqualTo("Invalid Fairway configuration: " + message);
  }

  @Test
  @ExtendWith(OutputCaptureExtension.class)
  void equalSettings_throughDefaultsOrEachService_start_withoutAWarningAboutHedging(CapturedOutput output)
      throws Exception {
    instances.ok("a");
    listInstances();
    run(App.class, "fairway.httpclient5.enabled=true", "fairway.default.max-attempts=2",
        "fairway.services.orders.failure-status-codes=503,500", "fairway.services.payments.failure-status-codes=500,503",
        "fairway.services.orders.retry-budget.percent=0.2", // the default, set on one service only
        "fairway.services.orders.affinity-header=X-User", "fairway.services.payments.affinity-header=x-user",
        "fairway.services.payments.strategy=random", "fairway.services.orders.hedging=1s",
        "fairway.services.payments.hedging=1000ms"); // one policy, written two ways
    FairwayHttpClient5Path path = context.getBean(FairwayHttpClient5Path.class);
    assertThat(path.balancers()).containsOnlyKeys("orders", "payments");
    assertThat(path.toString()).contains("maxAttempts=2", "hedging=HedgingPolicy{fixedDelay=PT1S");
    assertThat(get(context.getBean(RestClient.Builder.class).build())).isEqualTo("a");
    // The policy is in force on Boot's RestClient and RestTemplate too: nothing to warn about.
    assertThat(output.getAll()).doesNotContain("Fairway: fairway.services.orders.hedging")
        .doesNotContain("cannot hedge").doesNotContain("affinity-header of");
  }

  @Test
  void hedgingOff_noPolicy() throws Exception {
    instances.ok("a");
    listInstances();
    run(App.class, "fairway.httpclient5.enabled=true", "fairway.services.orders.strategy=random",
        "fairway.default.hedging=off");
    assertThat(get(context.getBean(RestClient.Builder.class).build())).isEqualTo("a");
    assertThat(context.getBean(FairwayHttpClient5Path.class).toString()).doesNotContain("hedging");
  }

  /** Every instance's answers, by the X-User header of the requests it answered. */
  private final Map<String, List<String>> answeredByKey = new ConcurrentHashMap<>();

  private MockWebServer recordingKeys(String name) throws IOException {
    return instances.server(request -> {
      String key = request.getHeaders().get("X-User");
      answeredByKey.computeIfAbsent(String.valueOf(key), k -> new CopyOnWriteArrayList<>()).add(name);
      return new MockResponse.Builder().code(200).body(name).build();
    });
  }

  @Test
  void affinityHeader_pinsEachKeyToOneInstance_throughBootsRestClient() throws Exception {
    recordingKeys("a");
    recordingKeys("b");
    recordingKeys("c");
    listInstances();
    run(App.class, "fairway.httpclient5.enabled=true", "fairway.services.orders.strategy=consistent-hash",
        "fairway.services.orders.affinity-header=X-User");
    RestClient client = context.getBean(RestClient.Builder.class).build();

    for (int round = 0; round < 4; round++) {
      for (int user = 0; user < 16; user++) {
        String answer = client.get().uri("http://orders/work").header("X-User", "user-" + user)
            .retrieve().body(String.class);
        assertThat(answer).isIn("a", "b", "c");
      }
    }
    assertThat(answeredByKey).hasSize(16);
    // Each key went to one instance all four times (without the key consistent-hash falls back to
    // power of two choices, which would scatter them), and the keys are spread over the instances.
    answeredByKey.forEach((key, answers) -> assertThat(answers).as(key).hasSize(4).containsOnly(answers.get(0)));
    assertThat(answeredByKey.values().stream().map(answers -> answers.get(0)).distinct().count()).isGreaterThan(1);
    assertThat(hc5Attempts()).isEqualTo(64);
  }

  /** Fairway's hedge counter of the path's orders balancer for {@code result} (sent, won). */
  private double hedges(String result) {
    Counter counter = context.getBean(MeterRegistry.class).find("fairway.hedges")
        .tag("balancer", "httpclient5:orders").tag("result", result).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  void asyncClientOfTheApplication_hedgesAsTheProperties_sayTheHedgeToTheFastInstanceWins() throws Exception {
    // The slow instance answers after 2 s: every call whose first copy goes there is answered by
    // the hedge, 50 ms later, or else by "slow".
    MockWebServer slow = instances.server(request ->
        new MockResponse.Builder().code(200).body("slow").headersDelay(2, TimeUnit.SECONDS).build());
    MockWebServer fast = instances.ok("fast");
    listInstances();
    run(App.class, "fairway.httpclient5.enabled=true", "fairway.services.orders.strategy=round-robin",
        "fairway.services.orders.hedging=50ms");
    FairwayHttpClient5Path path = context.getBean(FairwayHttpClient5Path.class);

    try (CloseableHttpAsyncClient client = path.configure(HttpAsyncClients.custom()).build()) {
      client.start();
      for (int i = 0; i < 6; i++) {
        SimpleHttpResponse response = client.execute(SimpleRequestBuilder.get("http://orders/work").build(), null)
            .get(10, TimeUnit.SECONDS);
        assertThat(response.getCode()).isEqualTo(200);
        assertThat(response.getBodyText()).isEqualTo("fast");
      }
    }
    // The fast instance answered every call once: as its first copy, or as the hedge of a call that
    // started on the slow one. Round robin starts a call there at least every other call unless a
    // call that started on the fast one was hedged too (its answer took over 50 ms: a cold start),
    // as hedges pick and shift the rotation; so at least one of six calls started there and was
    // won by its hedge.
    assertThat(fast.getRequestCount()).isEqualTo(6);
    assertThat(hedges("won")).isGreaterThanOrEqualTo(1.0);
    assertThat(hedges("sent")).isBetween(hedges("won"), 6.0);
    assertThat(slow.getRequestCount()).isLessThanOrEqualTo(6);
  }

  /**
   * Boot's RestClient (the classic HttpClient) hedges as the properties say. The slow instance
   * answers 2 s after a request unless the client closes the connection first; every call whose
   * first copy goes there is answered by the hedge to the fast instance, 50 ms later, and the slow
   * copy's connection is closed.
   */
  @RepeatedTest(3)
  void bootsRestClient_hedgesAsThePropertiesSay_theHedgeToTheFastInstanceWins_theSlowCopysConnectionClosed()
      throws Exception {
    try (SlowInstance slow = new SlowInstance(2_000)) {
      instances.ports.add(slow.port());
      MockWebServer fast = instances.ok("fast");
      listInstances();
      run(App.class, "fairway.httpclient5.enabled=true", "fairway.services.orders.strategy=round-robin",
          "fairway.services.orders.hedging=50ms", "fairway.services.orders.hedging.loser-hold=0s");
      RestClient client = context.getBean(RestClient.Builder.class).build();

      for (int i = 0; i < 8; i++) {
        assertThat(get(client)).isEqualTo("fast");
      }
      // Round robin starts a call on the slow instance at least every other call unless a call that
      // started on the fast one was hedged too (its answer took over 50 ms: a cold start), as hedges
      // pick and shift the rotation; so at least one of eight calls started there and was won by its
      // hedge. The fast instance answered each call once: as its first copy or as its hedge.
      assertThat(fast.getRequestCount()).isEqualTo(8);
      assertThat(hedges("won")).isGreaterThanOrEqualTo(1.0);
      assertThat(hedges("sent")).isBetween(hedges("won"), 8.0);
      assertThat(slow.requests()).isBetween(1, 8);
      // Every copy sent to the slow instance lost and was stopped: its connection closed by the
      // client before the 2 s answer, so the slow instance answered none.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (slow.closedByClient() < slow.requests() && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(slow.closedByClient()).isEqualTo(slow.requests());
      assertThat(slow.answered()).isZero();
      // Losing is no failure (no instance ejected), and with loser-hold 0s every slot is free.
      LoadBalancer balancer = context.getBean(FairwayHttpClient5Path.class).balancers().get("orders");
      assertThat(balancer.status()).extracting(TargetStatus::state).containsOnly(TargetState.HEALTHY);
      assertThat(balancer.status()).extracting(TargetStatus::inFlight).containsOnly(0);
    }
  }

  /**
   * A loopback HTTP/1.1 instance (TCP_NODELAY) that answers "slow" {@code delayMillis} after each
   * request, unless the client closes the connection first, which it counts.
   */
  static final class SlowInstance implements AutoCloseable {
    private final ServerSocket listener;
    private final int delayMillis;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "slow-instance");
      t.setDaemon(true);
      return t;
    });
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger answered = new AtomicInteger();
    private final AtomicInteger closedByClient = new AtomicInteger();
    private volatile boolean closed;

    SlowInstance(int delayMillis) throws IOException {
      this.delayMillis = delayMillis;
      this.listener = NoDelayServerSocketFactory.INSTANCE.createServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
      threads.execute(this::accept);
    }

    int port() {
      return listener.getLocalPort();
    }

    int requests() {
      return requests.get();
    }

    int answered() {
      return answered.get();
    }

    /** Requests whose connection the client closed (or reset) while they waited for their answer. */
    int closedByClient() {
      return closedByClient.get();
    }

    private void accept() {
      while (!closed) {
        try {
          Socket socket = listener.accept();
          open.add(socket);
          threads.execute(() -> serve(socket));
        } catch (IOException e) {
          return; // closed
        }
      }
    }

    private void serve(Socket socket) {
      try (socket) {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        while (readHead(in)) { // GETs: no request body
          requests.incrementAndGet();
          socket.setSoTimeout(delayMillis);
          try {
            if (in.read() < 0) { // a client sends nothing more before the answer: it closed the connection
              closedByClient.incrementAndGet();
              return;
            }
            return; // unexpected bytes: not HTTP/1.1 without pipelining
          } catch (SocketTimeoutException e) {
            socket.setSoTimeout(0); // the delay passed with the connection open: answer
          } catch (IOException e) {
            if (!closed) {
              closedByClient.incrementAndGet(); // a reset while the request waits is the client's close too
            }
            return;
          }
          out.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nslow".getBytes(StandardCharsets.US_ASCII));
          out.flush();
          answered.incrementAndGet();
        }
      } catch (IOException e) {
        // a connection reset with no request waiting (a copy cancelled before it was sent): no request to count
      } finally {
        open.remove(socket);
      }
    }

    /** Reads a request head; false at the end of the stream. */
    private static boolean readHead(InputStream in) throws IOException {
      int matched = 0;
      for (;;) {
        int b = in.read();
        if (b < 0) {
          return false;
        }
        matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3))
            ? matched + 1 : 0;
        if (matched == 4) {
          return true;
        }
      }
    }

    @Override
    public void close() throws IOException {
      closed = true;
      listener.close();
      for (Socket socket : open) {
        socket.close();
      }
      threads.shutdownNow();
    }
  }

  @Test
  void noService_orAnotherClientsFactoryBuilder_failsStartup_namingTheSwitch() {
    FairwayConfigurationException none = findCause(catchStartupFailure("fairway.httpclient5.enabled=true"));
    assertThat(none.property()).isEqualTo("fairway.httpclient5.enabled");
    assertThat(none.getMessage()).isEqualTo("fairway.httpclient5.enabled: true while fairway.services lists no service"
        + " (expected: the services to balance, each under fairway.services.<id>)");

    FairwayConfigurationException jdk = findCause(catchStartupFailure(JdkFactoryApp.class,
        "fairway.httpclient5.enabled=true", "fairway.services.orders.strategy=random"));
    assertThat(jdk.property()).isEqualTo("fairway.httpclient5.enabled");
    assertThat(jdk.getMessage()).startsWith("fairway.httpclient5.enabled: true, but the ClientHttpRequestFactoryBuilder"
        + " bean \"jdkFactories\" is a JdkClientHttpRequestFactoryBuilder (expected: Apache HttpClient 5's");
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class JdkFactoryApp {
    @Bean
    ClientHttpRequestFactoryBuilder<?> jdkFactories() {
      return ClientHttpRequestFactoryBuilder.jdk();
    }
  }

  private Throwable catchStartupFailure(String... properties) {
    return catchStartupFailure(App.class, properties);
  }

  private Throwable catchStartupFailure(Class<?> app, String... properties) {
    listInstances();
    Throwable failure = null;
    try {
      run(app, properties);
    } catch (RuntimeException e) {
      failure = e;
    }
    assertThat(failure).as("startup failure").isNotNull();
    return failure;
  }
}
