package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Pick;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import dev.fairway.lb.TargetStatus;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import mockwebserver3.MockResponse;
import okhttp3.OkHttpClient;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.client.MockClientHttpResponse;
import org.springframework.util.LinkedMultiValueMap;
import reactor.core.publisher.Flux;

/** The balancer and lifecycle alone, over a list the test sets, on a fake clock. */
class FairwayReactorLoadBalancerTest {
  private final AtomicReference<List<ServiceInstance>> list = new AtomicReference<>(List.of());
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final FairwayBalancers registry = new FairwayBalancers();
  private FairwayReactorLoadBalancer balancer;
  private FairwayLoadBalancerLifecycle lifecycle;

  @AfterEach
  void close() {
    if (balancer != null) {
      balancer.close();
    }
    if (lifecycle != null) {
      lifecycle.close();
    }
  }

  private void start(String... properties) {
    FairwayProperties p = new FairwayProperties();
    for (String property : properties) {
      String[] kv = property.split("=", 2);
      FairwayProperties.Service orders = p.getServices().computeIfAbsent("orders", id -> new FairwayProperties.Service());
      switch (kv[0]) {
        case "strategy" -> orders.setStrategy(kv[1]);
        case "affinity-header" -> orders.setAffinityHeader(kv[1]);
        default -> throw new IllegalArgumentException(kv[0]);
      }
    }
    ServiceSettings settings = new FairwaySettings(p, "").forService("orders");
    DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
    beans.registerSingleton("supplier", new ServiceInstanceListSupplier() {
      @Override
      public String getServiceId() {
        return "orders";
      }

      @Override
      public Flux<List<ServiceInstance>> get() {
        return Flux.just(list.get());
      }
    });
    balancer = new FairwayReactorLoadBalancer("orders", beans.getBeanProvider(ServiceInstanceListSupplier.class), settings,
        registry, meters, Duration.ofSeconds(60), now::get);
    lifecycle = new FairwayLoadBalancerLifecycle(settings, "orders", meters);
  }

  private static ServiceInstance instance(String id, int port, Map<String, String> metadata) {
    return new DefaultServiceInstance(id, "orders", "127.0.0.1", port, false, metadata);
  }

  private static ServiceInstance instance(String id, int port) {
    return instance(id, port, Map.of());
  }

  private FairwayServiceInstance choose(Request<?> request) {
    Response<ServiceInstance> r = balancer.choose(request).block(Duration.ofSeconds(5));
    assertThat(r).isNotNull();
    assertThat(r.hasServer()).isTrue();
    return (FairwayServiceInstance) r.getServer();
  }

  private FairwayServiceInstance choose() {
    return choose(new DefaultRequest<>());
  }

  private LoadBalancer fairway() {
    return registry.balancers().get("orders");
  }

  private static int inFlight(LoadBalancer lb) {
    return lb.status().stream().mapToInt(TargetStatus::inFlight).sum();
  }

  private static CompletionContext<Object, ServiceInstance, Object> completion(CompletionContext.Status status,
      ServiceInstance chosen, Object clientResponse) {
    return new CompletionContext<>(status, new DefaultRequest<>(), new DefaultResponse(chosen), clientResponse);
  }

  private static ResponseData status(int code) {
    return new ResponseData(HttpStatus.valueOf(code), new HttpHeaders(), new LinkedMultiValueMap<>(), null);
  }

  private static ResponseData reporting(int code, String loadReport) {
    HttpHeaders headers = new HttpHeaders();
    headers.add("endpoint-load-metrics", loadReport);
    return new ResponseData(HttpStatus.valueOf(code), headers, new LinkedMultiValueMap<>(), null);
  }

  private double reports(String result) {
    var counter = meters.find("fairway.load.reports").tag("service", "orders").tag("result", result).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  void loadReport_reachesThePick_whateverTheStatus_andIsCounted() {
    list.set(List.of(instance("a", 8081)));
    start();
    FairwayServiceInstance first = choose();
    lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, first,
        reporting(200, "TEXT application_utilization=0.5, named_metrics.rif=3")));
    TargetStatus a = fairway().status().get(0);
    assertThat(a.reportedUtilization()).isEqualTo(0.5);
    assertThat(a.reportedInFlight()).isEqualTo(3.0);

    FairwayServiceInstance second = choose();
    lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, second,
        reporting(503, "TEXT application_utilization=1.25, named_metrics.rif=9")));
    a = fairway().status().get(0);
    assertThat(a.reportedUtilization()).isEqualTo(1.25);
    assertThat(a.reportedInFlight()).isEqualTo(9.0);
    assertThat(reports("parsed")).isEqualTo(2.0);
    assertThat(reports("malformed")).isZero();
    assertThat(inFlight(fairway())).isZero();
  }

  /**
   * {@code fairway.load.reports} has one owner, lb-core's {@code LoadReportMeters}: the balancer
   * (reports it discarded), the OkHttp interceptor and the starter's lifecycle (reports they read)
   * count into one meter per result, registered once, with one set of tag keys, in the registry
   * they share; the meters stay while any of them holds them and go with the last.
   */
  @Test
  void loadReportMeter_isOneMeter_forTheBalancer_theInterceptor_andTheLifecycle() throws Exception {
    List<Meter.Id> added = new CopyOnWriteArrayList<>();
    meters.config().onMeterAdded(m -> {
      if (m.getId().getName().equals("fairway.load.reports")) {
        added.add(m.getId());
      }
    });
    String report = "TEXT application_utilization=0.5, named_metrics.rif=3";
    try (Instances instances = new Instances()) {
      instances.server(request -> new MockResponse.Builder().code(200).body("a")
          .addHeader("endpoint-load-metrics", report).build());
      list.set(List.of(instance("a", instances.ports.get(0))));
      start();
      LoadBalancer core = fairway();

      // the starter: one well-formed report, one malformed (its first choice delivers the list)
      lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, choose(), reporting(200, report)));
      lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, choose(), reporting(200, "TEXT rif")));
      // lb-okhttp, on the same balancer
      OkHttpClient client = new OkHttpClient.Builder()
          .addInterceptor(LoadBalancingInterceptor.builder().service("orders", core).build()).build();
      try (okhttp3.Response r = client.newCall(new okhttp3.Request.Builder().url("http://orders/x").build()).execute()) {
        assertThat(r.body().string()).isEqualTo("a");
      }
      // lb-core: a report of none in flight while this balancer has two calls there is implausible
      // (last: a report after it may find the target's reports set aside, counted as distrusted)
      Pick one = core.pick();
      Pick two = core.pick();
      one.reportLoad(0, 0);
      one.release();
      two.release();

      assertThat(added).extracting(id -> id.getTag("result")).containsExactlyInAnyOrder("implausible", "parsed", "malformed");
      for (Meter.Id id : added) {
        assertThat(id.getTags()).extracting(Tag::getKey).containsExactly("result", "service");
      }
      assertThat(meters.find("fairway.load.reports").counters()).hasSize(3);
      assertThat(reports("parsed")).isEqualTo(2.0); // the lifecycle's and the interceptor's
      assertThat(reports("malformed")).isEqualTo(1.0);
      assertThat(reports("implausible")).isEqualTo(1.0);
      assertThat(inFlight(core)).isZero();

      balancer.close(); // the balancer and the interceptor's meters let go; the lifecycle still holds them
      balancer = null;
      assertThat(meters.find("fairway.load.reports").counters()).hasSize(3);
      lifecycle.close();
      assertThat(meters.find("fairway.load.reports").counters()).isEmpty();
    }
  }

  @Test
  void loadReport_fromABlockingClientsResponse_reachesThePick() {
    list.set(List.of(instance("a", 8081)));
    start();
    MockClientHttpResponse response = new MockClientHttpResponse(new byte[0], HttpStatus.OK);
    response.getHeaders().add("endpoint-load-metrics", "TEXT cpu_utilization=0.25, named_metrics.rif=2");
    lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, choose(), response));
    TargetStatus a = fairway().status().get(0);
    assertThat(a.reportedUtilization()).isEqualTo(0.25);
    assertThat(a.reportedInFlight()).isEqualTo(2.0);
    assertThat(reports("parsed")).isEqualTo(1.0);
  }

  @Test
  void malformedLoadReport_isIgnored_andCounted_andNoReportIsNotCounted() {
    list.set(List.of(instance("a", 8081)));
    start();
    lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, choose(),
        reporting(200, "JSON {\"application_utilization\": 0.5}")));
    lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, choose(), status(200)));
    lifecycle.onComplete(completion(CompletionContext.Status.FAILED, choose(), null));
    TargetStatus a = fairway().status().get(0);
    assertThat(a.reportedUtilization()).isNaN();
    assertThat(a.reportedInFlight()).isNaN();
    assertThat(reports("malformed")).isEqualTo(1.0);
    assertThat(reports("parsed")).isZero();
    assertThat(inFlight(fairway())).isZero();
  }

  @Test
  void retry_excludesTheInstanceTriedLast() {
    list.set(List.of(instance("a", 8081), instance("b", 8082), instance("c", 8083)));
    start("strategy=random");
    FairwayServiceInstance first = choose();
    lifecycle.onComplete(completion(CompletionContext.Status.FAILED, first, null));
    for (int i = 0; i < 30; i++) {
      FairwayServiceInstance retry = choose(new DefaultRequest<>(new RetryableRequestContext(first)));
      assertThat(retry.getInstanceId()).isNotEqualTo(first.getInstanceId());
      lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, retry, status(200)));
    }
    // The previous instance as discovery gave it (not Fairway's wrapper) is excluded too, by its id.
    ServiceInstance plainB = instance("b", 8082);
    for (int i = 0; i < 30; i++) {
      FairwayServiceInstance retry = choose(new DefaultRequest<>(new RetryableRequestContext(plainB)));
      assertThat(retry.getInstanceId()).isNotEqualTo("b");
      lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, retry, status(200)));
    }
    assertThat(inFlight(fairway())).isZero();
  }

  @Test
  void retry_withNothingElseLeft_mayGoBackToTheSameInstance() {
    list.set(List.of(instance("a", 8081)));
    start();
    FairwayServiceInstance first = choose();
    lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, first, status(200)));
    assertThat(choose(new DefaultRequest<>(new RetryableRequestContext(first))).getInstanceId()).isEqualTo("a");
  }

  @Test
  void lifecycle_outcomes_holdTheSlotUntilCompletion() {
    list.set(List.of(instance("a", 8081)));
    start();
    FairwayServiceInstance ok = choose();
    assertThat(ok.getUri()).isEqualTo(URI.create("http://127.0.0.1:8081"));
    assertThat(inFlight(fairway())).isEqualTo(1);
    lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, ok, status(200)));
    assertThat(inFlight(fairway())).isZero();
    lifecycle.onComplete(completion(CompletionContext.Status.FAILED, ok, null)); // a second completion: ignored
    assertThat(fairway().status().get(0).state().name()).isEqualTo("HEALTHY");

    FairwayServiceInstance discarded = choose();
    lifecycle.onComplete(completion(CompletionContext.Status.DISCARD, discarded, null));
    assertThat(inFlight(fairway())).isZero();
    assertThat(balancer.outstanding().size()).isZero();

    // A plain instance (another balancer's) is left alone.
    lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, instance("a", 8081), status(200)));
  }

  @Test
  void failureStatuses_andConnectFailures_reachPassiveHealth() {
    list.set(List.of(instance("a", 8081), instance("b", 8082), instance("c", 8083), instance("d", 8084)));
    start("strategy=round-robin");
    // A refused connection ejects at once.
    FairwayServiceInstance refused = choose();
    lifecycle.onComplete(new CompletionContext<>(CompletionContext.Status.FAILED,
        new java.net.ConnectException("Connection refused"), new DefaultRequest<>(), new DefaultResponse(refused)));
    assertThat(stateOf(refused.getInstanceId())).isEqualTo("EJECTED");
    // A 503 is a failure: five in a row eject (the default consecutive-failures rule).
    String victim = null;
    for (int i = 0; i < 30 && (victim == null || !stateOf(victim).equals("EJECTED")); i++) {
      FairwayServiceInstance chosen = choose();
      boolean fails = victim == null || chosen.getInstanceId().equals(victim);
      if (victim == null) {
        victim = chosen.getInstanceId();
      }
      lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, chosen, status(fails ? 503 : 200)));
    }
    assertThat(stateOf(victim)).isEqualTo("EJECTED");
    assertThat(inFlight(fairway())).isZero();
  }

  private String stateOf(String id) {
    return fairway().status().stream().filter(s -> s.target().id().equals(id)).findFirst().orElseThrow().state().name();
  }

  @Test
  void abandonedPick_isReleasedAfterTheTimeout_andCounted() {
    list.set(List.of(instance("a", 8081)));
    start();
    choose(); // never completed
    assertThat(inFlight(fairway())).isEqualTo(1);
    now.addAndGet(Duration.ofSeconds(59).toNanos());
    FairwayServiceInstance second = choose(); // 59 s: still held
    assertThat(inFlight(fairway())).isEqualTo(2);
    now.addAndGet(Duration.ofSeconds(2).toNanos());
    FairwayServiceInstance third = choose(); // 61 s: the first is released, the second (2 s old) is not
    assertThat(inFlight(fairway())).isEqualTo(2);
    assertThat(meters.get("fairway.picks.abandoned").tag("service", "orders").counter().count()).isEqualTo(1.0);
    lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, second, status(200)));
    lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, third, status(200)));
    assertThat(inFlight(fairway())).isZero();
  }

  @Test
  void discoveredEntries_badOnesSkipped_allBadKeepsTheLastGoodList() {
    Map<String, String> zoned = new HashMap<>(Map.of("zone", "eu-1", "weight", "3"));
    list.set(List.of(instance("a", 8081, zoned), instance("bad-weight", 8082, Map.of("weight", "heavy")),
        instance("a", 8083), instance("zero", 8084, Map.of("weight", "0")), instance(null, 8085)));
    start();
    choose();
    assertThat(fairway().status()).extracting(s -> s.target().id() + "/" + s.target().weight() + "/" + s.target().zone())
        .containsExactly("a/3/eu-1", "127.0.0.1:8085/1/");
    assertThat(meters.get("fairway.discovery.skipped").tag("reason", "weight").counter().count()).isEqualTo(2.0);
    assertThat(meters.get("fairway.discovery.skipped").tag("reason", "duplicate").counter().count()).isEqualTo(1.0);

    list.set(List.of(instance("x", 8090, Map.of("weight", "-3"))));
    choose();
    assertThat(fairway().status()).extracting(s -> s.target().id()).containsExactly("a", "127.0.0.1:8085");

    list.set(List.of(instance("c", 8086)));
    choose();
    assertThat(fairway().status()).extracting(s -> s.target().id()).containsExactly("c");
  }

  @Test
  void affinityHeader_keepsAKeyOnOneInstance() {
    list.set(List.of(instance("a", 8081), instance("b", 8082), instance("c", 8083)));
    start("strategy=consistent-hash", "affinity-header=X-User");
    for (String user : new String[] {"alice", "bob", "carol"}) {
      HttpHeaders headers = new HttpHeaders();
      headers.add("X-User", user);
      Request<RequestDataContext> request = new DefaultRequest<>(new RequestDataContext(
          new RequestData(HttpMethod.GET, URI.create("http://orders/x"), headers, new LinkedMultiValueMap<>(), Map.of())));
      String home = null;
      for (int i = 0; i < 10; i++) {
        FairwayServiceInstance chosen = choose(request);
        home = home == null ? chosen.getInstanceId() : home;
        assertThat(chosen.getInstanceId()).isEqualTo(home);
        lifecycle.onComplete(completion(CompletionContext.Status.SUCCESS, chosen, status(200)));
      }
    }
  }

  @Test
  void noInstances_anEmptyResponse() {
    start();
    Response<ServiceInstance> r = balancer.choose(new DefaultRequest<>()).block(Duration.ofSeconds(5));
    assertThat(r).isNotNull();
    assertThat(r.hasServer()).isFalse();
  }
}
