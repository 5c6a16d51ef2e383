/**
 * Sends a bid from a bid form (the issues and the offers views): the form's submit button is held while it
 * travels, and its status line says what became of it, in the server's words on a refusal.
 */
import { ApiError, call } from './api.js';

export function placeBid(body: Record<string, unknown>, status: HTMLElement, submit: HTMLButtonElement): void {
  submit.disabled = true;
  status.textContent = 'Sending the bid...';
  call<{ orderId: string }>('POST', '/transactional/v1/orders/regular', { body, orderEntry: true })
    .then(({ body: answer }) => {
      status.textContent = `Bid sent to the OMS: order ${answer.data.orderId}. Its status follows in Orders.`;
    })
    .catch((error: unknown) => {
      status.textContent = error instanceof ApiError ? `Bid refused: ${error.describe()}` : 'The bid could not be sent';
    })
    .finally(() => {
      submit.disabled = false;
    });
}
