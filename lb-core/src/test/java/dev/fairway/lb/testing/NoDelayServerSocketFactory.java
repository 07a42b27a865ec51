package dev.fairway.lb.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import javax.net.ServerSocketFactory;

/**
 * Server sockets whose accepted sockets have TCP_NODELAY set. Without it a loopback exchange can
 * stall about 40 ms (Nagle's algorithm meets delayed ACK) and tests and measurements lie.
 */
public final class NoDelayServerSocketFactory extends ServerSocketFactory {
  public static final NoDelayServerSocketFactory INSTANCE = new NoDelayServerSocketFactory();

  @Override
  public ServerSocket createServerSocket() throws IOException {
    return new NoDelayServerSocket();
  }

  @Override
  public ServerSocket createServerSocket(int port) throws IOException {
    return new NoDelayServerSocket(port, 50, null);
  }

  @Override
  public ServerSocket createServerSocket(int port, int backlog) throws IOException {
    return new NoDelayServerSocket(port, backlog, null);
  }

  @Override
  public ServerSocket createServerSocket(int port, int backlog, InetAddress address) throws IOException {
    return new NoDelayServerSocket(port, backlog, address);
  }

  private static final class NoDelayServerSocket extends ServerSocket {
    NoDelayServerSocket() throws IOException {
      super();
    }

    NoDelayServerSocket(int port, int backlog, InetAddress address) throws IOException {
      super(port, backlog, address);
    }

    @Override
    public Socket accept() throws IOException {
      Socket socket = super.accept();
      socket.setTcpNoDelay(true);
      return socket;
    }
  }
}
