package dev.fairway.benchmarks;

import com.linecorp.armeria.client.ClientRequestContext;
import com.linecorp.armeria.client.Endpoint;
import com.linecorp.armeria.client.endpoint.EndpointGroup;
import com.linecorp.armeria.client.endpoint.EndpointSelectionStrategy;
import com.linecorp.armeria.client.endpoint.EndpointSelector;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.netflix.loadbalancer.BaseLoadBalancer;
import com.netflix.loadbalancer.IRule;
import com.netflix.loadbalancer.LoadBalancerStats;
import com.netflix.loadbalancer.RoundRobinRule;
import com.netflix.loadbalancer.Server;
import com.netflix.loadbalancer.WeightedResponseTimeRule;
import dev.fairway.lb.LoadBalancer;
import java.util.ArrayList;
import java.util.List;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.cluster.LoadBalance;
import org.apache.dubbo.rpc.cluster.loadbalance.ConsistentHashLoadBalance;
import org.apache.dubbo.rpc.cluster.loadbalance.LeastActiveLoadBalance;
import org.apache.dubbo.rpc.cluster.loadbalance.RoundRobinLoadBalance;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.RandomLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.RoundRobinLoadBalancer;
import org.springframework.cloud.loadbalancer.support.ServiceInstanceListSuppliers;

/**
 * Each library's balancer built through its own public API over {@link Fixtures#targets}, behind
 * one small interface. Every chooser is checked once at setup (it must return a target), so a
 * misconfigured peer fails loudly instead of measuring an early return.
 */
final class Peers {
  private Peers() {}

  /** One pick. {@code keys[index]} is the affinity key, used by the hash strategies only. */
  interface Chooser extends AutoCloseable {
    Object choose(int index, String[] keys) throws Exception;

    @Override
    default void close() throws Exception {}
  }

  static Chooser create(String name, int n) throws Exception {
    Chooser c = build(name, n);
    String[] keys = Fixtures.zipfKeys(1);
    for (int i = 0; i < 1_000; i++) {
      if (c.choose(i, keys) == null) {
        throw new IllegalStateException(name + " returned no target");
      }
    }
    return c;
  }

  private static Chooser build(String name, int n) throws Exception {
    if (name.startsWith("fairway-")) {
      return fairway(name.substring("fairway-".length()), n);
    }
    switch (name) {
      case "ribbon-round-robin":
        return ribbon(new RoundRobinRule(), n, false);
      case "ribbon-weighted-response-time":
        return ribbon(new WeightedResponseTimeRule(), n, true);
      case "spring-round-robin":
        return spring(n, true);
      case "spring-random":
        return spring(n, false);
      case "dubbo-round-robin":
        return dubbo(new RoundRobinLoadBalance(), n, false);
      case "dubbo-least-active":
        return dubbo(new LeastActiveLoadBalance(), n, false);
      case "dubbo-consistent-hash":
        return dubbo(new ConsistentHashLoadBalance(), n, true);
      case "armeria-round-robin":
        return armeria(EndpointSelectionStrategy.roundRobin(), n);
      case "armeria-weighted-round-robin":
        return armeria(EndpointSelectionStrategy.weightedRoundRobin(), n);
      default:
        throw new IllegalArgumentException("balancer: " + name);
    }
  }

  // ------------------------------------------------------------------ Fairway

  private static Chooser fairway(String strategy, int n) {
    LoadBalancer lb = FairwayState.balancer(strategy, n, false);
    if (FairwayState.isKeyed(strategy)) {
      return new Chooser() {
        @Override
        public Object choose(int index, String[] keys) throws Exception {
          return FairwayState.pickAndRelease(lb, keys[index]);
        }

        @Override
        public void close() {
          lb.close();
        }
      };
    }
    return new Chooser() {
      @Override
      public Object choose(int index, String[] keys) throws Exception {
        return FairwayState.pickAndRelease(lb, null);
      }

      @Override
      public void close() {
        lb.close();
      }
    };
  }

  // ------------------------------------------------------------------ Netflix Ribbon

  /**
   * {@code BaseLoadBalancer} with the rule, servers added through {@code addServers}. With no
   * {@code IPing} every server counts as alive. For {@code WeightedResponseTimeRule} every server
   * gets response-time samples (10..40 ms, by weight) before the rule is attached, so its first
   * weight computation has data and it takes its weighted path instead of falling back to round
   * robin.
   */
  private static Chooser ribbon(IRule rule, int n, boolean responseTimes) {
    BaseLoadBalancer lb = new BaseLoadBalancer();
    List<Server> servers = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      servers.add(new Server(Fixtures.host(i), Fixtures.port(i)));
    }
    lb.addServers(servers);
    if (responseTimes) {
      LoadBalancerStats stats = lb.getLoadBalancerStats();
      for (int i = 0; i < n; i++) {
        for (int s = 0; s < 10; s++) {
          stats.noteResponseTime(servers.get(i), 10.0 * Fixtures.weight(i));
        }
      }
    }
    lb.setRule(rule);
    return new Chooser() {
      @Override
      public Object choose(int index, String[] keys) {
        return lb.chooseServer(null);
      }

      @Override
      public void close() {
        if (rule instanceof WeightedResponseTimeRule) {
          ((WeightedResponseTimeRule) rule).shutdown();
        }
        lb.shutdown();
      }
    };
  }

  // ------------------------------------------------------------------ Spring Cloud LoadBalancer

  /**
   * {@code RoundRobinLoadBalancer} / {@code RandomLoadBalancer} over the fixed supplier Spring
   * provides ({@code ServiceInstanceListSuppliers.toProvider}); {@code choose(request).block()} is
   * how its blocking client (BlockingLoadBalancerClient) consumes it.
   */
  private static Chooser spring(int n, boolean roundRobin) {
    ServiceInstance[] instances = new ServiceInstance[n];
    for (int i = 0; i < n; i++) {
      instances[i] = new DefaultServiceInstance("bench-" + i, "bench", Fixtures.host(i), Fixtures.port(i), false);
    }
    var provider = ServiceInstanceListSuppliers.toProvider("bench", instances);
    ReactorServiceInstanceLoadBalancer lb =
        roundRobin ? new RoundRobinLoadBalancer(provider, "bench") : new RandomLoadBalancer(provider, "bench");
    Request<?> request = new DefaultRequest<>();
    return (index, keys) -> {
      Response<ServiceInstance> response = lb.choose(request).block();
      return response == null ? null : response.getServer();
    };
  }

  // ------------------------------------------------------------------ Apache Dubbo

  /** The smallest real {@link Invoker}: a URL (with the target's weight) and nothing to call. */
  static final class BenchInvoker implements Invoker<Echo> {
    private final URL url;

    BenchInvoker(URL url) {
      this.url = url;
    }

    @Override
    public Class<Echo> getInterface() {
      return Echo.class;
    }

    @Override
    public Result invoke(Invocation invocation) {
      throw new UnsupportedOperationException("benchmark invoker");
    }

    @Override
    public URL getUrl() {
      return url;
    }

    @Override
    public boolean isAvailable() {
      return true;
    }

    @Override
    public void destroy() {}
  }

  /** The service interface the Dubbo invokers stand for. */
  public interface Echo {
    String echo(String key);
  }

  /**
   * {@code LoadBalance.select(invokers, url, invocation)} as Dubbo's cluster invokers call it. The
   * consistent hash hashes the invocation's first argument (Dubbo's default), so each thread keeps
   * one {@link RpcInvocation} per pre-generated key, built on its first pass: the per-call cost is
   * Dubbo's selection, not building invocations.
   */
  private static Chooser dubbo(LoadBalance lb, int n, boolean keyed) {
    List<Invoker<Echo>> invokers = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      invokers.add(new BenchInvoker(URL.valueOf("dubbo://" + Fixtures.host(i) + ":" + (20880 + Fixtures.port(i) - 8080)
          + "/" + Echo.class.getName() + "?interface=" + Echo.class.getName() + "&methods=echo&weight="
          + (100 * Fixtures.weight(i)))));
    }
    List<Invoker<Echo>> fixed = List.copyOf(invokers);
    URL consumer = URL.valueOf("consumer://127.0.0.1/" + Echo.class.getName() + "?interface=" + Echo.class.getName());
    if (!keyed) {
      RpcInvocation invocation = invocation("none");
      return (index, keys) -> lb.select(fixed, consumer, invocation);
    }
    ThreadLocal<KeyedInvocations> perThread = new ThreadLocal<>();
    return (index, keys) -> {
      KeyedInvocations inv = perThread.get();
      if (inv == null || inv.keys != keys) {
        inv = new KeyedInvocations(keys);
        perThread.set(inv);
      }
      return lb.select(fixed, consumer, inv.invocations[index]);
    };
  }

  static RpcInvocation invocation(String key) {
    return new RpcInvocation("echo", Echo.class.getName(), "", new Class<?>[] {String.class}, new Object[] {key});
  }

  private static final class KeyedInvocations {
    final String[] keys;
    final RpcInvocation[] invocations;

    KeyedInvocations(String[] keys) {
      this.keys = keys;
      this.invocations = new RpcInvocation[keys.length];
      for (int i = 0; i < keys.length; i++) {
        invocations[i] = invocation(keys[i]);
      }
    }
  }

  // ------------------------------------------------------------------ Armeria

  /**
   * A selector from {@code strategy.newSelector(EndpointGroup.of(endpoints))}, called with
   * {@code selectNow(ctx)}; the context is built once (a real client builds one per request anyway,
   * for other reasons).
   */
  private static Chooser armeria(EndpointSelectionStrategy strategy, int n) {
    List<Endpoint> endpoints = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      endpoints.add(Endpoint.of(Fixtures.host(i), Fixtures.port(i)).withWeight(Fixtures.weight(i)));
    }
    EndpointGroup group = EndpointGroup.of(endpoints);
    EndpointSelector selector = strategy.newSelector(group);
    ClientRequestContext ctx = ClientRequestContext.of(HttpRequest.of(HttpMethod.GET, "/"));
    return new Chooser() {
      @Override
      public Object choose(int index, String[] keys) {
        return selector.selectNow(ctx);
      }

      @Override
      public void close() {
        group.closeAsync();
      }
    };
  }

}
