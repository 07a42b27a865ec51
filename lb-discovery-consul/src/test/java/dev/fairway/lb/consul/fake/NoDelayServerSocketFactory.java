package dev.fairway.lb.consul.fake;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import javax.net.ServerSocketFactory;

/**
 * Server sockets whose accepted connections have TCP_NODELAY set: on loopback, Nagle plus delayed
 * ACKs would otherwise add ~40 ms to small replies and distort every timing in the tests.
 */
public final class NoDelayServerSocketFactory extends ServerSocketFactory {
  @Override
  public ServerSocket createServerSocket() throws IOException {
    return new NoDelayServerSocket();
  }

  @Override
  public ServerSocket createServerSocket(int port) throws IOException {
    ServerSocket s = new NoDelayServerSocket();
    s.bind(new java.net.InetSocketAddress(port));
    return s;
  }

  @Override
  public ServerSocket createServerSocket(int port, int backlog) throws IOException {
    ServerSocket s = new NoDelayServerSocket();
    s.bind(new java.net.InetSocketAddress(port), backlog);
    return s;
  }

  @Override
  public ServerSocket createServerSocket(int port, int backlog, InetAddress address) throws IOException {
    ServerSocket s = new NoDelayServerSocket();
    s.bind(new java.net.InetSocketAddress(address, port), backlog);
    return s;
  }

  private static final class NoDelayServerSocket extends ServerSocket {
    NoDelayServerSocket() throws IOException {
      super();
    }

    @Override
    public Socket accept() throws IOException {
      Socket s = super.accept();
      s.setTcpNoDelay(true);
      return s;
    }
  }
}
